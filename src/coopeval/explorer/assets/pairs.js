/* Model against model (#view=pairs&a=<agent>&b=<agent>; docs/explorer.md#model-against-model,
   coopeval.explorer.pairs): pick two agents and see the store's paired comparisons of the two,
   turned so that Δ = first − second, per study, metric and scope, as a chart (the "pairs" kind)
   with its table; each row links to the cells behind it. The rows are data/pairs.js, loaded on
   this page only. */
(function () {
  'use strict';
  var CE = window.CE, el = CE.el;

  function turned(r, flip) {
    var lo = r.ci_low === undefined ? null : r.ci_low, hi = r.ci_high === undefined ? null : r.ci_high;
    return {
      panel: r.study + ' · ' + r.metric, study: r.study, metric: r.metric, scope: r.scope,
      delta: flip ? -r.delta : r.delta, ci_low: flip ? (hi === null ? null : -hi) : lo, ci_high: flip ? (lo === null ? null : -lo) : hi,
      p_adjusted: r.p_adjusted === undefined ? null : r.p_adjusted, correction: r.correction || null,
      significant: r.p_adjusted !== null && r.p_adjusted !== undefined && r.p_adjusted < 0.05 ? 'yes' : 'no',
      mde: r.mde === undefined ? null : r.mde, n_clusters: r.n_clusters === undefined ? null : r.n_clusters, href: r.href
    };
  }

  CE.pairsPage = function (q) {
    var info = CE.store.index.pairs || { count: 0, agents: [] };
    if (!info.count) {
      CE.show(el('h2', {}, 'Model against model'), el('p', { class: 'warn' }, 'The store has no paired comparisons (its comparisons table is missing or empty): nothing to compare.'));
      return;
    }
    CE.load('pairs', 'data/pairs.js').then(function (all) {
      var agents = info.agents, a = q.get('a') || agents[0], b = q.get('b') || agents[1];
      function picker(name, value) {
        var s = el('select', { id: 'pair-' + name, 'aria-label': name === 'a' ? 'first agent' : 'second agent' }, agents.map(function (x) {
          var o = el('option', { value: x }, x);
          if (x === value) o.selected = true;
          return o;
        }));
        s.addEventListener('change', function () {
          location.hash = '#view=pairs&a=' + encodeURIComponent(document.getElementById('pair-a').value) + '&b=' + encodeURIComponent(document.getElementById('pair-b').value);
        });
        return s;
      }
      var rows = [];
      all.forEach(function (r) {
        if (r.a === a && r.b === b) rows.push(turned(r, false));
        else if (r.a === b && r.b === a) rows.push(turned(r, true));
      });
      CE.show(el('h2', {}, 'Model against model'), el('p', {}, 'first ', picker('a', a), ' against second ', picker('b', b)),
        rows.length ? CE.chart({ kind: 'pairs', title: a + ' against ' + b, rows: rows })
          : el('p', { class: 'note' }, 'The store has no comparison of ' + a + ' and ' + b + '.'));
    }).catch(CE.fail);
  };
}());
