/* Model against model (#view=pairs&study=<study>&a=<agent>&b=<agent>[&metric=&mechanism=&game=];
   docs/explorer.md#model-against-model, coopeval.explorer.pairs): pick a study and two of its agents
   and see the store's paired comparisons of the two, turned so that Δ = first − second, one chart per
   metric and unit (CoopEval's normalised rows over the games apart from its raw points), each with
   its table; filters narrow by metric, mechanism (condition, protocol) and game (testbed, variant).
   A row says what it can claim (evidence) and links to the two agents' cells of its scope. The rows
   are data/pairs.js, loaded on this page only. */
(function () {
  'use strict';
  var CE = window.CE, el = CE.el;
  var ALL = '*';
  var PARTS = { coopeval: ['mechanism', 'game'], gossip: ['condition', 'testbed'], evolution: ['protocol', 'variant'] };

  var texts = null;  // per metric label: [unit, direction] (coopeval.explorer.pairs.pairs_info)
  function turned(r, flip) {
    var lo = r.ci_low === undefined ? null : r.ci_low, hi = r.ci_high === undefined ? null : r.ci_high;
    var out = {};
    Object.keys(r).forEach(function (k) { out[k] = r[k]; });
    out.delta = flip ? -r.delta : r.delta;
    out.ci_low = flip ? (hi === null ? null : -hi) : lo;
    out.ci_high = flip ? (lo === null ? null : -lo) : hi;
    ['p_adjusted', 'correction', 'mde', 'n_clusters', 'why', 'cells'].forEach(function (k) { if (out[k] === undefined) out[k] = null; });
    if (!out.evidence) out.evidence = out.p_adjusted !== null && out.p_adjusted < 0.05 ? 'significant' : 'not significant';
    if (!out.label) out.label = r.metric;
    var text = (texts || {})[out.label] || [];
    out.unit = text[0] || null;
    out.direction = text[1] || null;
    out.panel = r.study + ' · ' + out.label;
    return out;
  }
  function hash(p) {
    return '#view=pairs' + Object.keys(p).filter(function (k) { return p[k] && p[k] !== ALL; })
      .map(function (k) { return '&' + k + '=' + encodeURIComponent(p[k]); }).join('');
  }

  CE.pairsPage = function (q) {
    var info = CE.store.index.pairs || { count: 0, agents: [] };
    if (!info.count) {
      CE.show(el('h2', {}, 'Model against model'), el('p', { class: 'warn' }, 'The store has no paired comparisons (its comparisons table is missing or empty): nothing to compare.'));
      return;
    }
    texts = info.texts || {};
    CE.load('pairs', 'data/pairs.js').then(function (all) {
      var studies = info.studies || {};
      var names = Object.keys(studies);
      if (!names.length) {  // an index written before the per-study summary
        all.forEach(function (r) { if (!studies[r.study]) studies[r.study] = { agents: [], first: [r.a, r.b] }; [r.a, r.b].forEach(function (x) { if (studies[r.study].agents.indexOf(x) < 0) studies[r.study].agents.push(x); }); });
        names = Object.keys(studies).sort();
      }
      function hasPair(study, a, b) {
        return all.some(function (r) { return r.study === study && ((r.a === a && r.b === b) || (r.a === b && r.b === a)); });
      }
      var qa = q.get('a'), qb = q.get('b'), study = q.get('study');
      if (names.indexOf(study) < 0) study = names.filter(function (s) { return hasPair(s, qa, qb); })[0] || names[0];
      var a = qa, b = qb;
      if (!hasPair(study, a, b)) { a = studies[study].first[0]; b = studies[study].first[1]; }
      var chosen = { metric: q.get('metric') || ALL, mechanism: q.get('mechanism') || ALL, game: q.get('game') || ALL };
      var parts = PARTS[study] || ['mechanism', 'game'];
      var pairRows = [];
      all.forEach(function (r) {
        if (r.study !== study) return;
        if (r.a === a && r.b === b) pairRows.push(turned(r, false));
        else if (r.a === b && r.b === a) pairRows.push(turned(r, true));
      });
      function part(r, i) { return r[parts[i]] !== undefined ? r[parts[i]] : r.scope.split('/')[i]; }
      var rows = pairRows.filter(function (r) {
        return (chosen.metric === ALL || r.label === chosen.metric) && (chosen.mechanism === ALL || part(r, 0) === chosen.mechanism) &&
          (chosen.game === ALL || part(r, 1) === chosen.game);
      });
      function go(change) {
        var p = { study: study, a: a, b: b, metric: chosen.metric, mechanism: chosen.mechanism, game: chosen.game };
        Object.keys(change).forEach(function (k) { p[k] = change[k]; });
        location.hash = hash(p);
      }
      function select(id, label, options, value, onChange, labels) {
        var s = el('select', { id: id, 'aria-label': label }, options.map(function (x, i) {
          var o = el('option', { value: x }, labels ? labels[i] : x);
          if (x === value) o.selected = true;
          return o;
        }));
        s.addEventListener('change', function () { onChange(s.value); });
        return el('label', {}, label + ' ', s);
      }
      function values(f) {
        var seen = [];
        pairRows.forEach(function (r) { var v = f(r); if (seen.indexOf(v) < 0) seen.push(v); });
        return [ALL].concat(seen);
      }
      var agents = studies[study].agents;
      var pickA = select('pair-a', 'first agent', agents, a, function (v) { go({ a: v }); });
      var pickB = select('pair-b', 'second agent', agents, b, function (v) { go({ b: v }); });
      var studyPick = select('pair-study', 'study', names, study, function (v) { go({ study: v, a: null, b: null, metric: ALL, mechanism: ALL, game: ALL }); });
      var nameOf = parts;
      var filters = el('form', { class: 'filters pair-filters', role: 'search', 'aria-label': 'filter the comparisons' },
        select('pair-metric', 'metric', values(function (r) { return r.label; }), chosen.metric, function (v) { go({ metric: v }); }),
        select('pair-mechanism', nameOf[0], values(function (r) { return part(r, 0); }), chosen.mechanism, function (v) { go({ mechanism: v }); }),
        select('pair-game', nameOf[1], values(function (r) { return part(r, 1); }), chosen.game, function (v) { go({ game: v }); }));
      Array.prototype.forEach.call(filters.querySelectorAll('option'), function (o) { if (o.value === ALL) o.textContent = 'all'; });
      var panels = [], byPanel = {};
      rows.forEach(function (r) {
        var key = r.panel + '\u0000' + (r.unit || '');
        if (!(key in byPanel)) { byPanel[key] = []; panels.push(key); }
        byPanel[key].push(r);
      });
      var charts = panels.map(function (key) {
        var members = byPanel[key], first = members[0];
        var unit = first.unit ? ' (' + first.unit + ')' : '';
        return el('section', { class: 'pair-panel' },
          first.direction ? el('p', { class: 'note pair-direction' }, first.label + ': ' + first.direction + '.') : null,
          CE.chart({ kind: 'pairs', title: first.panel + unit + ': ' + a + ' against ' + b, rows: members, axis: 'Δ = first − second' + unit }));
      });
      var uncompared = study === 'coopeval' && (info.uncompared || []).length ? el('p', { class: 'note pair-uncompared' },
        'The comparisons cover the default cells only; these variants have no paired comparisons: ' + info.uncompared.join(', ') + '.') : null;
      CE.show(el('h2', {}, 'Model against model'),
        el('p', {}, studyPick, ' ', pickA, ' against ', pickB), filters, uncompared,
        charts.length ? el('div', {}, charts) : el('p', { class: 'note' }, pairRows.length
          ? 'No comparison of ' + a + ' and ' + b + ' under these filters; choose all above for every one.'
          : 'The store has no comparison of ' + a + ' and ' + b + ' in ' + study + '.'));
    }).catch(CE.fail);
  };
}());
