/* Charts (docs/explorer.md#charts; coopeval.explorer.charts). A chart is a kind (a Vega-Lite spec
   written with Altair whose data is the named dataset "rows", the columns of its table and a note,
   in INDEX.charts.kinds) and an instance {kind, title, rows}. CE.chart(instance) returns a figure:
   the rows drawn by Vega-Lite (the scripts ship with the site: vendor.json; loaded on the first
   chart, so pages without charts never load them), the same rows as a table behind a toggle, and
   a click on a mark opens the row's href (a cell, an episode's round, a list of cells). Vega runs
   with its expression interpreter, so the page's Content-Security-Policy needs no eval. */
(function () {
  'use strict';
  var CE = window.CE, el = CE.el, fmt = CE.fmt;
  var COUNTS = ['n', 'round', 'step', 'generation', 'n_clusters', 'cells', 'players'];  // whole numbers; every other number is a metric (CE.num)
  function cellText(field, v) { return COUNTS.indexOf(field) >= 0 ? fmt(v) : CE.num(v); }
  var SCRIPTS = ['vega.min.js', 'vega-lite.min.js', 'vega-embed.min.js', 'vega-interpreter.js'];
  var ready = null, counter = 0;

  function loadScripts() {
    if (ready) return ready;
    ready = SCRIPTS.reduce(function (previous, src) {
      return previous.then(function () {
        return new Promise(function (resolve, reject) {
          var s = document.createElement('script');
          s.src = src;
          s.onload = resolve;
          s.onerror = function () { reject(new Error('cannot load ' + src)); };
          document.head.appendChild(s);
        });
      });
    }, Promise.resolve());
    return ready;
  }

  function dataTable(fields, rows) {
    return el('table', { class: 'chart-data' },
      el('tr', {}, fields.map(function (f) { return el('th', {}, f[1]); }), el('th', {}, 'episodes')),
      rows.map(function (r) {
        return el('tr', {}, fields.map(function (f) { return el('td', { class: typeof r[f[0]] === 'number' ? 'num' : null }, cellText(f[0], r[f[0]])); }),
          el('td', {}, r.href ? el('a', { href: r.href }, 'open') : ''));
      }));
  }

  /* The spec with every nominal colour scale over a field of "domains" ({field: [values]}) given
     that fixed domain (values of the rows it lacks appended), so a value keeps its colour in every
     chart and under every filter (coopeval.explorer.charts.colour_domains). */
  function withDomains(spec, domains, rows, ranges) {
    if (!domains) return spec;
    (function visit(node) {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) { node.forEach(visit); return; }
      var color = node.encoding && node.encoding.color;
      if (color && color.field && domains[color.field] && color.type === 'nominal') {
        var domain = domains[color.field].slice();
        rows.forEach(function (r) { var v = r[color.field]; if (v !== undefined && v !== null && domain.indexOf(v) < 0) domain.push(v); });
        color.scale = Object.assign({}, color.scale || {}, { domain: domain });
        // a field with more values than the palette: one colour per value (coopeval.explorer.charts.colour_ranges)
        if (ranges && ranges[color.field] && ranges[color.field].length >= domain.length) color.scale.range = ranges[color.field].slice(0, domain.length);
      }
      Object.keys(node).forEach(function (k) { if (k !== 'encoding') visit(node[k]); });
    })(spec);
    return spec;
  }

  /* Charts shrink to a narrow screen (a phone): a faceted chart puts its panels in one column, and
     a panel wider than the page's room gets the room's width; a chart still wider scrolls in its box. */
  function fitScreen(spec) {
    var room = Math.max(160, Math.min(window.innerWidth, document.documentElement.clientWidth || window.innerWidth) - 190);
    if (spec.facet && spec.columns && room < 2 * ((spec.spec && spec.spec.width) || 300)) spec.columns = 1;
    [spec, spec.spec].forEach(function (s) { if (s && typeof s.width === 'number' && s.width > room) s.width = room; });
    return spec;
  }

  CE.chart = function (c) {
    var kind = CE.store.index.charts.kinds[c.kind];
    var id = 'chart-' + (++counter);
    var vis = el('div', { class: 'vis', role: 'img', 'aria-label': c.title + ': a chart; its data is in the table behind the button above it' });
    var data = dataTable(kind.fields, c.rows);
    data.id = id + '-table';
    data.hidden = true;
    var toggle = el('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false', 'aria-controls': data.id }, 'show the data as a table');
    toggle.addEventListener('click', function () {
      data.hidden = !data.hidden;
      toggle.setAttribute('aria-expanded', data.hidden ? 'false' : 'true');
      toggle.textContent = data.hidden ? 'show the data as a table' : 'hide the table';
    });
    var picks = el('div', { class: 'chart-picks', role: 'dialog', 'aria-label': 'marks at the clicked point' });
    picks.hidden = true;
    var figure = el('figure', { class: 'chart', id: id, 'data-kind': c.kind },
      el('figcaption', {}, el('b', {}, c.title), ' ', toggle), el('p', { class: 'note' }, kind.note), vis, picks, data);
    /* A click opens the clicked mark's page; where marks coincide (the kind's "at" fields equal:
       same panel, x and y) it lists every mark there, each linked to its own page. */
    function clicked(d) {
      var at = kind.at || [];
      var here = at.length ? c.rows.filter(function (r) { return at.every(function (f) { return r[f] === d[f]; }); }) : [d];
      var pages = here.map(function (r) { return r.href; }).filter(function (h, i, all) { return h && all.indexOf(h) === i; });
      if (pages.length < 2) { location.hash = d.href; return; }
      var shown = kind.fields.filter(function (f) { return at.indexOf(f[0]) < 0 && f[0] !== 'n'; });
      picks.textContent = '';
      picks.appendChild(el('p', {}, here.length + ' marks coincide here; open one:'));
      picks.appendChild(el('ul', {}, here.map(function (r) {
        return el('li', {}, el('a', { href: r.href }, shown.map(function (f) { return f[1] + ' ' + fmt(r[f[0]]); }).join(' · ')));
      })));
      picks.hidden = false;
    }
    loadScripts().then(function () {
      // c.axis: the x axis title of a kind written with the placeholder "@axis@" (the pairs chart: Δ and its unit)
      var text = JSON.stringify(kind.spec);
      if (c.axis) text = text.split('"@axis@"').join(JSON.stringify(c.axis));
      var spec = withDomains(JSON.parse(text), c.domains, c.rows, c.ranges);
      fitScreen(spec);
      spec.datasets = { rows: c.rows };
      return window.vegaEmbed(vis, spec, {
        renderer: 'svg', actions: false, defaultStyle: false, ast: true, expr: window.vegaInterpreter.expressionInterpreter,
        tooltip: { disableDefaultStyle: true }
      });
    }).then(function (result) {
      result.view.addEventListener('click', function (event, item) {
        var d = item && item.datum;
        if (d && d.href) clicked(d);
      });
      figure.setAttribute('data-drawn', 'yes');
    }).catch(function (err) {
      vis.appendChild(el('p', { class: 'warn' }, 'The chart could not be drawn (' + (err && err.message ? err.message : err) + '); its data is in the table.'));
      data.hidden = false;
      figure.setAttribute('data-drawn', 'error');
    });
    return figure;
  };

  /* Why a leaderboard chart ("board:<study>:<metric>") has no row under the filter: the board's
     rows the filter keeps have no value of its metric, each blank saying why (the table's reason);
     null when the filter keeps no board row at all. */
  function blankReasons(c, keep) {
    var parts = c.kind.split(':'), board = (CE.store.index.leaderboards || {})[c.study];
    if (parts[0] !== 'board' || !board) return null;
    var key = parts[2], reasons = [];
    board.rows.filter(keep).forEach(function (r) {
      var v = r[key] && r[key][0], why = r[key + '_why'];
      if (typeof v === 'number' && !isFinite(v)) why = isNaN(v) ? 'undefined (NaN) in these cells' : 'infinite in these cells (the table shows ' + CE.num(v) + '; a chart cannot place it)';
      if (why && reasons.indexOf(why) < 0) reasons.push(why);
    });
    return reasons.length ? reasons : null;
  }
  /* The study-wide charts of a study (leaderboards, gossip and evolution over time): each
     chart's rows are a data file of their own (data/charts/<n>.js), loaded here. "filter" ({field:
     value}, the board's filters) keeps the rows that have each field at its value; a row without
     the field (e.g. the tones have no model) is kept. Every colour scale has the fixed domain of
     its field's values on the board. The charts left without a row are named in one note, in the
     charts' order, each with the reason its metric is blank under the filter where the board has one. */
  CE.studyCharts = function (study, filter) {
    var all = CE.store.index.charts || { charts: [] };
    var listed = all.charts.filter(function (c) { return c.study === study; });
    var notes = ((all.notes || {})[study] || []).map(function (text) { return el('p', { class: 'note chart-note' }, text); });
    var domains = (all.domains || {})[study], ranges = (all.ranges || {})[study];
    var fields = Object.keys(filter || {});
    function keep(r) { return fields.every(function (f) { return !(f in r) || r[f] === filter[f]; }); }
    if (!listed.length && !notes.length) return [];
    var empty = el('p', { class: 'note chart-empty' }), unfilled = listed.map(function () { return null; });
    empty.hidden = true;
    function say() {
      var undefinedHere = {}, order = [], bare = [];
      unfilled.forEach(function (u) {
        if (!u) return;
        if (!u.reasons) { bare.push(u.title); return; }
        var why = u.reasons.join('; ');
        if (!(why in undefinedHere)) { undefinedHere[why] = []; order.push(why); }
        undefinedHere[why].push(u.title);
      });
      var text = order.map(function (why) { return 'Not drawn, no value under the filter: ' + undefinedHere[why].join('; ') + ' (' + why + ').'; });
      if (bare.length) text.push('No rows under the filter, not drawn: ' + bare.join('; ') + '.');
      empty.textContent = text.join(' ');
      empty.hidden = !text.length;
    }
    return [el('h3', {}, 'Charts')].concat(notes, listed.map(function (c, i) {
      var holder = el('div', { class: 'chart-holder' });
      CE.load('chart:' + c.file, 'data/charts/' + c.file + '.js').then(function (rows) {
        var kept = rows.filter(keep);
        if (kept.length) { holder.appendChild(CE.chart({ kind: c.kind, title: c.title, rows: kept, domains: domains, ranges: ranges })); return; }
        holder.remove();
        unfilled[i] = { title: c.title, reasons: blankReasons(c, keep) };
        say();
      }, function (err) { holder.appendChild(el('p', { class: 'warn' }, String(err && err.message ? err.message : err))); });
      return holder;
    }), empty);
  };
  /* A cell's charts (CoopEval: cooperation over rounds, replicator trajectory). */
  CE.cellCharts = function (cell) {
    return cell.charts && cell.charts.length ? [el('h3', {}, 'Charts')].concat(cell.charts.map(CE.chart)) : [];
  };
}());
