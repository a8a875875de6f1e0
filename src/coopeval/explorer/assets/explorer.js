/* coopeval explorer: hand-written, no dependencies. Every stored text enters the page through
   text nodes (el() below), never as markup. Data arrives as script files that call
   CE.register(key, data) (browsers refuse fetch() of file:// URLs). */
(function () {
  'use strict';
  var CE = window.CE;
  var INDEX = CE.store.index;
  var main = document.getElementById('main');

  // ---------------------------------------------------------------- data loading
  CE.load = function (key, file) {
    if (key in CE.store) return Promise.resolve(CE.store[key]);
    return new Promise(function (resolve, reject) {
      var list = CE.waiting[key];
      if (list) { list.push([resolve, reject]); return; }
      CE.waiting[key] = [[resolve, reject]];
      var s = document.createElement('script');
      s.src = file;
      s.onload = function () {
        var l = CE.waiting[key];
        if (l && !CE.pending[key]) { delete CE.waiting[key]; l.forEach(function (f) { f[1](new Error(file + ' registered nothing')); }); }
      };
      s.onerror = function () {
        var l = CE.waiting[key] || [];
        delete CE.waiting[key];
        l.forEach(function (f) { f[1](new Error('cannot load ' + file)); });
      };
      document.head.appendChild(s);
    });
  };
  var CELL_FILES = null;
  function cellFile(id) {  // the index names each cell's data file (coopeval.explorer.build.cell_file)
    if (!CELL_FILES) { CELL_FILES = {}; (INDEX.cells || []).forEach(function (c) { CELL_FILES[c.cell_id] = c.file; }); }
    return CELL_FILES[id] || 'missing';
  }
  function loadCell(id) { return CE.load('cell:' + id, 'data/cell/' + cellFile(id) + '.js'); }
  function loadEpisode(summary) {
    var parts = [];
    for (var i = 0; i < summary.parts; i++) parts.push(CE.load('ep:' + summary.key + ':' + i, 'data/ep/' + summary.key + '.' + i + '.js'));
    return Promise.all(parts).then(function (ps) {
      var out = [];
      ps.forEach(function (p) { out = out.concat(p.decisions); });
      return out;
    });
  }
  function bucket(id) {
    var h = 0;
    for (var i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) % INDEX.buckets;
    return h;
  }
  function locate(id) {
    var b = bucket(id);
    return CE.load('dix:' + b, 'data/dix/' + b + '.js').then(function (m) {
      if (!Object.prototype.hasOwnProperty.call(m, id)) throw new Error('decision ' + id + ' is not in this site');
      var p = m[id].split('/');  // <cell id>/<episode key>/<part>; a reference cell id holds '/' itself
      var part = +p.pop(), key = p.pop();
      return { cell: p.join('/'), key: key, part: part };
    });
  }
  function episodeOf(cell, matchup) {
    for (var i = 0; i < cell.episodes.length; i++) if (cell.episodes[i].matchup === matchup) return cell.episodes[i];
    return null;
  }
  function episodeByKey(cell, key) {
    for (var i = 0; i < cell.episodes.length; i++) if (cell.episodes[i].key === key) return cell.episodes[i];
    return null;
  }

  // ---------------------------------------------------------------- DOM helpers
  function el(tag, attrs) {
    var e = document.createElement(tag);
    attrs = attrs || {};
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined) return;
      if (k === 'class') e.className = v;
      else if (k === 'on') Object.keys(v).forEach(function (ev) { e.addEventListener(ev, v[ev]); });
      else if (k === 'style') Object.keys(v).forEach(function (p) { e.style[p] = v[p]; });
      else e.setAttribute(k, v);
    });
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(e, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { add(e, x); }); return; }
    if (c instanceof Node) { e.appendChild(c); return; }
    e.appendChild(document.createTextNode(String(c)));
  }
  function hash(params) {
    var parts = [];
    Object.keys(params).forEach(function (k) {
      if (params[k] !== null && params[k] !== undefined && params[k] !== '') parts.push(encodeURIComponent(k) + '=' + encodeURIComponent(params[k]));
    });
    return '#' + parts.join('&');
  }
  function link(params, text) { return el('a', { href: hash(params) }, text); }
  function unsigned0(t) { return /^-0(\.0*)?$/.test(t) ? t.slice(1) : t; }  // never "-0.000"
  function fmt(v) {
    if (v === null || v === undefined) return '';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : unsigned0(v.toFixed(3));
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }
  /* A metric's value, one way everywhere: three decimals (an interval's ends alike), no "-0.000",
     Infinity and NaN by name. */
  function num(v) {
    if (typeof v !== 'number') return fmt(v);
    if (!isFinite(v)) return isNaN(v) ? 'NaN' : (v > 0 ? 'Infinity' : '-Infinity');
    return unsigned0(v.toFixed(3));
  }
  function table(headers, rowsData, numeric) {
    return el('table', {}, el('tr', {}, headers.map(function (h) { return el('th', {}, h); })),
      rowsData.map(function (r) {
        return el('tr', {}, r.map(function (c) { return el('td', { class: typeof c === 'number' ? 'num' : null }, c instanceof Node ? c : fmt(c)); }));
      }));
  }
  function show() {
    main.textContent = '';
    for (var i = 0; i < arguments.length; i++) add(main, arguments[i]);
  }
  function variantLabel(c) {  // a CoopEval cell's variant and number of players (the store's cells table), '' without
    if (!c.variant) return '';
    return c.variant + (c.players !== undefined && c.players !== null ? ' (N = ' + c.players + ')' : '');
  }
  function cellLabel(c) {
    var one = c.agents && c.agents.length === 1 ? ' · ' + c.agents[0] : '';
    var variant = variantLabel(c);
    return c.study + ' · ' + c.mechanism + (variant ? ' · ' + variant : '') + ' · ' + c.game + ' · ' + c.run + one;
  }
  function findCell(id) {
    for (var i = 0; i < INDEX.cells.length; i++) if (INDEX.cells[i].cell_id === id) return INDEX.cells[i];
    return null;
  }
  function crumbs(cell, episode, round) {
    var c = findCell(cell.cell_id) || cell;
    return el('p', { class: 'crumbs' }, link({}, 'overview'), ' › ', link({ view: 'cells', study: c.study }, c.study), ' › ',
      link({ view: 'cell', cell: cell.cell_id }, cellLabel(c)),
      episode ? [' › ', link({ view: 'ep', cell: cell.cell_id, m: episode.matchup }, 'match-up ' + episode.matchup)] : null,
      round !== undefined && round !== null ? [' › round ' + round] : null);
  }

  // ---------------------------------------------------------------- overview and leaderboards
  function overview() {
    var o = INDEX.overview;
    var missing = Object.keys(INDEX.missing).map(function (s) {
      return el('p', { class: 'warn' }, 'Study ' + s + ': the store lacks table(s) ' + INDEX.missing[s].join(', ') + '; its pages show what the other tables hold.');
    });
    Object.keys(INDEX.unreadable || {}).forEach(function (s) {
      missing.push(el('p', { class: 'warn' }, 'Study ' + s + ': this explorer cannot read ' + INDEX.unreadable[s].join('; ') + ': ' + INDEX.rebuild + '. Its pages show what the other tables hold.'));
    });
    if (INDEX.stale_tables) missing.push(staleTables());
    var shared = INDEX.shared_ids || { count: 0 };
    if (shared.count) missing.push(el('p', { class: 'warn shared-ids' }, 'This store was written before decision ids were unique: ' + shared.count +
      ' decision row(s) share their id with a decision of another cell (e.g. ' + shared.examples.join(', ') + '); a #decision= link opens the first cell\'s.' +
      ' Open such a decision from its episode instead, or rebuild the store.'));
    show(el('h2', {}, 'Run overview'), missing,
      el('p', {}, 'Store ' + INDEX.store + ', site built ' + INDEX.built_utc + (INDEX.raw_replies ? '' : ' without raw replies') + '.'),
      el('h3', {}, 'Studies'),
      table(['study', 'cells', 'decisions', 'failed', 're-asked', 'truncated', ''], o.studies.map(function (s) {
        return [s.study, s.cells, s.decisions, s.failed, s.reasked, s.truncated,
          el('span', {}, link({ view: 'cells', study: s.study }, 'cells'), ' ', link({ view: 'board', study: s.study }, 'leaderboard'))];
      })),
      INDEX.sensitivity && INDEX.sensitivity.length ? [el('h3', {}, 'Prompt wordings'), el('p', {}, link({ view: 'sensitivity' }, 'Prompt sensitivity'),
        ': each model\'s metric under each prompt variant, the variance shares and whether each pairwise ordering holds under every variant.')] : null,
      el('h3', {}, 'Agents: calls, tokens, cost'),
      table(['study', 'agent', 'model', 'decisions', 'attempts', 'attempt errors', 'prompt tokens', 'completion tokens', 'cost (USD)'], o.models.map(function (m) {
        return [m.study, m.agent, m.model, m.decisions, m.attempts, m.attempt_errors, m.prompt_tokens, m.completion_tokens, m.cost_usd];
      })),
      el('h3', {}, 'Provenance'), table(['key', 'value'], o.provenance),
      INDEX.config ? el('details', {}, el('summary', {}, 'Merged config of the run (config.effective.yaml)'), el('pre', { class: 'config' }, INDEX.config)) : null);
  }
  // why the run's result tables were left out (coopeval.explorer.aggregate.result_tables): one line
  function staleTables() { return el('p', { class: 'warn stale-tables' }, 'Result tables not used: ' + INDEX.stale_tables + '.'); }
  function boards() {
    show(el('h2', {}, 'Leaderboards'), Object.keys(INDEX.leaderboards).map(function (s) {
      return el('p', {}, link({ view: 'board', study: s }, s));
    }));
  }
  var ALL = '*';  // a board filter's value in the URL that keeps every row ('all' in a URL means the same)
  /* The board's filters (coopeval.explorer.charts.board_filters): a select per field whose choice
     narrows the charts and the table alike and is kept in the URL (&mechanism=…&game=…&agent=…,
     * or all for all); a URL without any opens on the board's default panel, if it has one. */
  function boardFilter(study, b, q) {
    var spec = ((INDEX.charts || {}).filters || {})[study] || { fields: [], opens_on: {} };
    var given = spec.fields.some(function (f) { return q.has(f); });
    var chosen = {};
    spec.fields.forEach(function (f) {
      var v = (given ? q.get(f) : spec.opens_on[f]) || ALL;
      chosen[f] = v === 'all' ? ALL : v;
    });
    return { fields: spec.fields, chosen: chosen, opened: !given && Object.keys(spec.opens_on).length > 0,
      active: function () {
        var out = {};
        spec.fields.forEach(function (f) { if (chosen[f] !== ALL) out[f] = chosen[f]; });
        return out;
      },
      keeps: function (r) { return spec.fields.every(function (f) { return chosen[f] === ALL || r[f] === chosen[f]; }); },
      values: function (f) {  // the board's values of f, and the URL's if the board lacks it (its filter then keeps no row)
        var own = b.rows.map(function (r) { return r[f]; }).filter(function (v, i, all) { return v !== null && all.indexOf(v) === i; });
        return chosen[f] === ALL || own.indexOf(chosen[f]) >= 0 ? own : own.concat([chosen[f]]);
      } };
  }
  function board(study, q) {
    var b = INDEX.leaderboards[study];
    if (!b) { show(el('p', { class: 'warn' }, 'No leaderboard for ' + study + (INDEX.missing[study] ? ': missing ' + INDEX.missing[study].join(', ') : ''))); return; }
    var filter = boardFilter(study, b, q);
    var state = { key: null, dir: 1 };
    var holder = el('div');
    function cellOf(col, r) {
      var v = r[col.key];
      if (col.metric) {  // value, its interval ([low, high] or ± half-width), the tables' marks; a blank says why
        var why = r[col.key + '_why'], mark = r[col.key + '_mark'];
        if (v[0] === null) return why ? '(' + why + ')' : '';
        return num(v[0]) + (v.length > 2 && v[2] !== null ? ' [' + num(v[2]) + ', ' + num(v[3]) + ']' : v[1] === null || v[1] === undefined ? '' : ' ± ' + num(v[1])) + (mark ? ' ' + mark : '');
      }
      return v;
    }
    function sortValue(col, r) { var v = r[col.key]; return col.metric ? v[0] : v; }
    function render() {
      var rs = b.rows.filter(filter.keeps);
      if (state.key) {
        var col = b.columns.filter(function (c) { return c.key === state.key; })[0];
        rs.sort(function (x, y) {
          var a = sortValue(col, x), z = sortValue(col, y);
          if (a === z) return 0;
          if (a === null) return 1;
          if (z === null) return -1;
          return (a < z ? -1 : 1) * state.dir;
        });
      }
      holder.textContent = '';
      holder.appendChild(el('table', { class: 'board' },
        el('tr', {}, b.columns.map(function (c) {
          return el('th', { class: 'sortable', on: { click: function () { state.dir = state.key === c.key ? -state.dir : (c.metric && !c.lower ? -1 : 1); state.key = c.key; render(); } } },
            c.label + (state.key === c.key ? (state.dir > 0 ? ' ▲' : ' ▼') : ''));
        })),
        rs.map(function (r) { return el('tr', {}, b.columns.map(function (c) { return el('td', { class: c.metric ? 'num' : null }, fmt(cellOf(c, r))); })); })));
    }
    // the charts lead; the table (the filter's rows, sortable) is folded below them
    var summary = el('summary'), charts = el('div', { class: 'board-charts' });
    function apply() {
      render();
      var kept = b.rows.filter(filter.keeps).length;
      summary.textContent = 'The leaderboard as a table (' + (kept === b.rows.length ? kept : kept + ' of ' + b.rows.length) + ' rows; click a column to sort)';
      charts.textContent = '';
      add(charts, CE.studyCharts(study, filter.active()));
    }
    var selects = filter.fields.map(function (f) {
      var select = el('select', { name: f, on: { change: function () {
        filter.chosen[f] = select.value;
        var params = { view: 'board', study: study };
        filter.fields.forEach(function (g) { params[g] = filter.chosen[g]; });
        history.replaceState(null, '', hash(params));
        apply();
      } } }, [ALL].concat(filter.values(f)).map(function (v) {
        // one label per option: a value literally named "all", or one the URL names but the board lacks, says so
        var own = v === ALL || b.rows.some(function (r) { return r[f] === v; });
        var text = v === ALL ? 'all' : !own ? v + ' (no such row)' : v === 'all' ? 'all (the value)' : v;
        var option = el('option', { value: v }, text);
        if (filter.chosen[f] === v) option.selected = true;
        return option;
      }));
      return el('label', {}, f + ' ', select);
    });
    var opened = filter.opened ? el('p', { class: 'note board-opened' }, 'Opened on ' + filter.fields.filter(function (f) { return filter.chosen[f] !== ALL; })
      .map(function (f) { return f + ' = ' + filter.chosen[f]; }).join(', ') + ': one panel of each chart; choose all (or another) above for more.') : null;
    var folded = el('details', { class: 'board-table' }, summary, holder);
    apply();
    show(el('h2', {}, 'Leaderboard: ' + study), study === 'coopeval' && INDEX.stale_tables ? staleTables() : null, el('p', { class: 'note' }, b.note),
      filter.fields.length ? el('form', { class: 'filters board-filters', role: 'search', 'aria-label': 'filter the charts and the table' }, selects) : null, opened, charts, folded);
  }

  // ---------------------------------------------------------------- cells and cell page
  /* &mechanism=, &variant=, &matching=, &game= (several comma-separated: the games of a comparison over
     the social dilemmas), &agent= narrow the list (a chart's point links here); &a=&b= keep the cells of
     a comparison of two agents (coopeval.explorer.pairs): CoopEval cells seating both, a gossip or
     evolution cell of either model (those cells hold one model each). */
  function cells(q) {
    var study = q.get('study'), narrow = ['mechanism', 'variant', 'matching', 'game', 'agent', 'a', 'b'].filter(function (k) { return q.get(k); });
    var games = q.get('game') ? q.get('game').split(',') : null, pair = [q.get('a'), q.get('b')].filter(function (x) { return x; });
    function model(c) { return c.model !== undefined ? c.model : (c.agents.length === 1 ? c.agents[0] : null); }
    function compared(c) {
      if (!pair.length) return true;
      if (c.study === 'coopeval') return pair.every(function (x) { return c.agents.indexOf(x) >= 0; });
      return pair.indexOf(model(c)) >= 0;
    }
    var list = INDEX.cells.filter(function (c) {
      return (!study || c.study === study) && (!q.get('mechanism') || c.mechanism === q.get('mechanism')) &&
        (!q.get('variant') || c.variant === q.get('variant')) && (!q.get('matching') || c.matching === q.get('matching')) &&
        (!games || games.indexOf(c.game) >= 0) && (!q.get('agent') || c.agents.indexOf(q.get('agent')) >= 0) && compared(c);
    });
    var variants = list.some(function (c) { return c.variant; });
    show(el('h2', {}, 'Cells' + (study ? ' of ' + study : '')),
      narrow.length ? el('p', { class: 'narrowed' }, narrow.map(function (k) { return k + ' = ' + q.get(k); }).join(', ') + ' · ' + list.length + ' cell' + (list.length === 1 ? '' : 's') + ' · ', link({ view: 'cells', study: study }, 'all cells')) : null,
      table(['study', 'mechanism / condition / protocol'].concat(variants ? ['variant'] : [], ['game / testbed', 'run', 'agents', 'decisions', 'failed', 're-asked', 'truncated', 'cell']), list.map(function (c) {
        return [c.study, c.mechanism].concat(variants ? [variantLabel(c)] : [], [c.game, c.run, c.agents.join(', '), c.decisions, c.failed, c.reasked, c.truncated, link({ view: 'cell', cell: c.cell_id }, c.cell_id)]);
      })));
  }
  function cellPage(id, q) {
    loadCell(id).then(function (cell) {
      var eps = table(['match-up', 'agents', 'rounds', 'decisions', 'failed', 're-asked', 'truncated', ''], cell.episodes.map(function (e) {
        return [link({ view: 'ep', cell: id, m: e.matchup }, e.matchup), e.agents.join(', '), e.rounds ? e.rounds.join('–') : '', e.decisions, e.failed, e.reasked, e.truncated,
          link({ view: 'export', cell: id, m: e.matchup }, 'export')];
      }));
      var manifest = cell.extras && cell.extras.manifest && cell.extras.manifest[0];
      show(crumbs(cell), el('h2', {}, 'Cell ' + cellLabel(cell)),
        manifest ? el('details', {}, el('summary', {}, 'Cell manifest'), table(['field', 'value'], Object.keys(manifest).map(function (k) { return [k, fmt(manifest[k])]; }))) : null,
        filterForm(cell, q), el('div', { id: 'results' }),
        el('h3', {}, 'Episodes'), eps, CE.cellCharts(cell), CE.studyViews.cell(cell));
      if (q.get('apply')) runFilter(cell, q);
    }, fail);
  }
  function filterForm(cell, q) {
    function sel(name, options) {
      return el('label', {}, name + ' ', el('select', { name: name }, options.map(function (o) {
        var opt = el('option', { value: o }, o || 'any');
        if (q.get(name) === o) opt.selected = true;
        return opt;
      })));
    }
    function inp(name) { var i = el('input', { name: name, size: 14 }); i.value = q.get(name) || ''; return el('label', {}, name + ' ', i); }
    var kinds = {};
    cell.episodes.forEach(function (e) { e.kinds.forEach(function (k) { kinds[k] = 1; }); });
    var form = el('form', { class: 'filters' }, sel('model', [''].concat(cell.agents)), sel('status', ['', 'failed', 'reasked', 'truncated']),
      sel('kind', [''].concat(Object.keys(kinds).sort())), inp('action'), inp('label'), inp('text'), el('button', { type: 'submit' }, 'filter decisions'));
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var p = { view: 'cell', cell: cell.cell_id, apply: '1' };
      Array.prototype.forEach.call(form.elements, function (x) { if (x.name && x.value) p[x.name] = x.value; });
      location.hash = hash(p);
    });
    return form;
  }
  function matches(d, q) {
    var st = q.get('status');
    if (q.get('model') && d.agent !== q.get('model')) return false;
    if (st === 'failed' && d.status !== 'failed') return false;
    if (st === 'reasked' && !(d.n_attempts > 1)) return false;
    if (st === 'truncated' && !d.truncated) return false;
    if (q.get('kind') && d.kind !== q.get('kind')) return false;
    if (q.get('action') && String(d.action_token === null ? d.action : d.action_token) !== q.get('action')) return false;
    if (q.get('label') && !(d.judge && d.judge.labels && d.judge.labels.indexOf(q.get('label')) >= 0)) return false;
    var t = q.get('text');
    if (t) {
      t = t.toLowerCase();
      var hit = (d.response || '').toLowerCase().indexOf(t) >= 0 || d.attempts.some(function (a) { return (a.response || '').toLowerCase().indexOf(t) >= 0; });
      if (!hit) return false;
    }
    return true;
  }
  function runFilter(cell, q) {
    var out = document.getElementById('results');
    out.textContent = 'searching…';
    Promise.all(cell.episodes.map(function (e) {
      return loadEpisode(e).then(function (ds) { return ds.filter(function (d) { return matches(d, q); }).map(function (d) { return [e, d]; }); });
    })).then(function (lists) {
      var hits = [].concat.apply([], lists);
      out.textContent = '';
      add(out, [el('h3', {}, hits.length + ' matching decision(s)'), decisionList(hits.map(function (h) { return h[1]; }), function (d) { return d; })]);
    }, fail);
  }
  function decisionList(items, get) {
    return el('table', { class: 'hits' }, el('tr', {}, ['decision', 'round', 'seat', 'agent', 'kind', 'status', 'attempts'].map(function (h) { return el('th', {}, h); })),
      items.map(function (x) {
        var d = get(x);
        return el('tr', {}, el('td', {}, link({ decision: d.decision_id }, d.decision_id)), el('td', {}, fmt(d.round)), el('td', {}, fmt(d.seat)), el('td', {}, d.agent),
          el('td', {}, d.kind), el('td', { class: d.status === 'failed' ? 'failed' : null }, d.status), el('td', {}, fmt(d.n_attempts)));
      }));
  }

  // ---------------------------------------------------------------- run-wide flagged decisions
  function flags(q) {
    var parts = [];
    for (var i = 0; i < INDEX.flag_parts; i++) parts.push(CE.load('flags:' + i, 'data/flags/' + i + '.js'));
    Promise.all(parts).then(function (ps) {
      var all = [].concat.apply([], ps);
      var st = q.get('status') || 'failed';
      var hits = all.filter(function (f) {
        if (q.get('model') && f[5] !== q.get('model')) return false;
        if (st === 'failed') return f[7] === 'failed';
        if (st === 'reasked') return f[8] > 1;
        if (st === 'truncated') return f[9];
        return true;
      });
      show(el('h2', {}, st + ' decisions of the run: ' + hits.length),
        decisionList(hits, function (f) { return { decision_id: f[0], round: f[10], seat: null, agent: f[5], kind: f[6], status: f[7], n_attempts: f[8] }; }));
    }, fail);
  }

  // ---------------------------------------------------------------- decisions
  function verdict(a, d, last) {
    if (a.error) return 'rejected: ' + a.error;
    if (last) return d.status === 'ok' ? 'accepted' : 'failed: ' + (d.error || 'no valid answer');
    return 'rejected';
  }
  function messagesView(ms) {
    return ms.map(function (m) { return el('div', {}, el('span', { class: 'role' }, m.role), el('pre', { class: 'msg' }, m.content)); });
  }
  function distribution(parsed) {
    var p;
    try { p = JSON.parse(parsed); } catch (e) { return null; }
    if (!p || typeof p !== 'object' || Array.isArray(p)) return null;
    var keys = Object.keys(p).filter(function (k) { return typeof p[k] === 'number'; });
    if (!keys.length) return null;
    return table(keys, [keys.map(function (k) { return p[k]; })]);
  }
  function decisionCard(d, extra) {
    var n = d.attempts.length;
    return el('div', { class: 'card decision', 'data-decision': d.decision_id },
      el('h4', {}, 'Round ' + fmt(d.round) + ' · seat ' + fmt(d.seat) + ' · ' + d.agent + ' · ' + d.kind + ' · ',
        el('span', { class: d.status === 'failed' ? 'failed' : null }, d.status), ' · ', link({ decision: d.decision_id }, d.decision_id)),
      extra || null,
      d.parsed ? [el('div', {}, 'Parsed answer:'), el('pre', { class: 'parsed' }, d.parsed), distribution(d.parsed)] : null,
      el('p', {}, (d.action_token === null && d.action === null ? 'No action sampled' : 'Sampled action: ' + fmt(d.action_token !== null ? d.action_token : d.action)) +
        (d.draw !== null ? ' (draw ' + fmt(d.draw) + ')' : '') + (d.points !== null ? ' · points ' + fmt(d.points) : '') +
        (d.base_points !== null ? ' (base ' + fmt(d.base_points) + ')' : '') + (d.mediated ? ' · mediated' : '') +
        (d.truncated ? ' · truncated' : '') + (d.error ? ' · error: ' + d.error : '')),
      d.attempts.map(function (a, i) {
        return el('div', { class: 'attempt' + (a.error ? ' rejected' : '') },
          el('div', {}, el('b', {}, 'Attempt ' + (i + 1) + ' of ' + n), ' · ' + verdict(a, d, i === n - 1) + ' · ' + (a.model || '') +
            ' · tokens ' + fmt(a.prompt_tokens) + '/' + fmt(a.completion_tokens) + (a.cost_usd ? ' · $' + fmt(a.cost_usd) : '') + (a.finish_reason ? ' · finish ' + a.finish_reason : '')),
          el('div', {}, a.added ? 'Re-ask (messages added to the first prompt):' : 'Prompt as sent:'), el('div', { class: 'prompt' }, messagesView(a.messages)),
          a.reasoning ? [el('div', {}, 'Reasoning:'), el('pre', {}, a.reasoning)] : null,
          el('div', {}, 'Raw reply:'), el('pre', { class: 'reply' }, a.response === null ? '' : a.response));
      }),
      !n && d.response ? [el('div', {}, 'Reply:'), el('pre', { class: 'reply' }, d.response)] : null,
      d.judge ? el('div', { class: 'judge' }, el('b', {}, 'Judge: '), (d.judge.labels || []).join(', ') + ' (confidence ' + fmt(d.judge.confidence) + ', ' + d.judge.status + ', ' + (d.judge.judge_model || '') + ')',
        el('pre', {}, d.judge.reasoning || '')) : null);
  }
  /* The co-players' decisions of the same kind in the same round (e.g. the other seat's action):
     what this decision played against, each with its sampled action and points, linked. */
  function coPlayers(d, decisions) {
    if (d.round === null || d.round === undefined) return null;
    var others = decisions.filter(function (x) { return x.round === d.round && x.kind === d.kind && x.decision_id !== d.decision_id && x.seat !== d.seat; });
    if (!others.length) return null;
    return el('p', { class: 'co-players' }, 'Co-player' + (others.length > 1 ? 's' : '') + ' this round: ', others.map(function (x, i) {
      var action = x.action_token !== null && x.action_token !== undefined ? x.action_token : x.action;
      return [i ? '; ' : '', link({ decision: x.decision_id }, 'seat ' + fmt(x.seat) + ' ' + x.agent),
        ' → ' + (action === null || action === undefined ? 'no action (' + x.status + ')' : fmt(action)) + (x.points !== null && x.points !== undefined ? ' · points ' + fmt(x.points) : '')];
    }));
  }
  function decisionPage(id) {
    locate(id).then(function (loc) {
      return loadCell(loc.cell).then(function (cell) {
        var e = episodeByKey(cell, loc.key);
        return CE.load('ep:' + loc.key + ':' + loc.part, 'data/ep/' + loc.key + '.' + loc.part + '.js').then(function (p) {
          var d = p.decisions.filter(function (x) { return x.decision_id === id; })[0];
          show(crumbs(cell, e, d.round), el('h2', {}, 'Decision ' + id),
            el('p', {}, link({ view: 'ep', cell: cell.cell_id, m: e.matchup, round: d.round }, 'whole round ' + d.round)),
            coPlayers(d, p.decisions),
            decisionCard(d, CE.studyViews.decisionExtra(cell, e, d)));
        });
      });
    }).catch(fail);
  }

  // ---------------------------------------------------------------- episodes
  function byRound(ds) {
    var m = {};
    ds.forEach(function (d) { var r = d.round === null ? -1 : d.round; (m[r] = m[r] || []).push(d); });
    return m;
  }
  function compareChooser(cell, e) {
    var s = el('select', { id: 'compare-with' }, el('option', { value: '' }, 'compare with…'));
    cell.episodes.forEach(function (o) {
      if (o.key !== e.key) s.appendChild(el('option', { value: cell.cell_id + '\n' + o.matchup }, 'this cell: ' + o.matchup));
    });
    INDEX.cells.forEach(function (c) {
      if (c.cell_id !== cell.cell_id && c.study === cell.study && c.game === cell.game) s.appendChild(el('option', { value: c.cell_id + '\n' + e.matchup }, 'same match-up in ' + cellLabel(c)));
    });
    s.addEventListener('change', function () {
      if (!s.value) return;
      var p = s.value.split('\n');
      location.hash = hash({ view: 'compare', a: cell.cell_id, am: e.matchup, b: p[0], bm: p[1] });
    });
    return s;
  }
  function episodePage(id, matchup, round) {
    loadCell(id).then(function (cell) {
      var e = episodeOf(cell, matchup);
      if (!e) throw new Error('cell ' + id + ' has no match-up ' + matchup);
      return loadEpisode(e).then(function (ds) {
        var rounds = byRound(ds);
        var keys = Object.keys(rounds).map(Number).sort(function (a, b) { return a - b; });
        var head = [crumbs(cell, e, round), el('h2', {}, 'Match-up ' + matchup), el('p', {}, e.agents.join(' vs '), ' · ', link({ view: 'export', cell: id, m: matchup }, 'export Markdown / LaTeX'), ' · ', compareChooser(cell, e)),
          CE.studyViews.episode(cell, e, ds)];
        if (round !== null && round !== '') {
          var r = +round;
          show(head, el('p', {}, keys.map(function (k) { return [k === r ? el('b', {}, String(k)) : link({ view: 'ep', cell: id, m: matchup, round: k }, String(k)), ' ']; })),
            el('h3', {}, 'Round ' + r), (rounds[r] || []).map(function (d) { return decisionCard(d, CE.studyViews.decisionExtra(cell, e, d)); }));
          return;
        }
        show(head, el('h3', {}, 'Rounds'), el('table', { class: 'rounds' }, el('tr', {}, el('th', {}, 'round'), el('th', {}, 'decisions: seat agent kind → action (points)')),
          keys.map(function (k) {
            return el('tr', {}, el('td', {}, link({ view: 'ep', cell: id, m: matchup, round: k }, String(k))), el('td', {}, rounds[k].map(function (d) {
              return [link({ decision: d.decision_id }, 'seat ' + fmt(d.seat) + ' ' + d.agent + ' ' + d.kind + ' → ' + fmt(d.action_token !== null ? d.action_token : d.action) + (d.points !== null ? ' (' + fmt(d.points) + ')' : '')),
                d.status === 'failed' ? el('span', { class: 'failed' }, ' failed') : null, el('br')];
            })));
          })));
      });
    }).catch(fail);
  }
  function comparePage(q) {
    var sides = [[q.get('a'), q.get('am')], [q.get('b'), q.get('bm')]];
    Promise.all(sides.map(function (s) {
      return loadCell(s[0]).then(function (cell) {
        var e = episodeOf(cell, s[1]);
        if (!e) throw new Error('cell ' + s[0] + ' has no match-up ' + s[1]);
        return loadEpisode(e).then(function (ds) { return { cell: cell, e: e, rounds: byRound(ds) }; });
      });
    })).then(function (two) {
      var keys = {};
      two.forEach(function (t) { Object.keys(t.rounds).forEach(function (k) { keys[k] = 1; }); });
      var grid = el('div', { class: 'side' }, el('div', {}, 'round'),
        two.map(function (t, i) { return el('div', { class: 'side-head', id: 'side-' + i }, el('b', {}, cellLabel(t.cell)), el('br'), link({ view: 'ep', cell: t.cell.cell_id, m: t.e.matchup }, t.e.matchup)); }));
      Object.keys(keys).map(Number).sort(function (a, b) { return a - b; }).forEach(function (k) {
        grid.appendChild(el('div', {}, String(k)));
        two.forEach(function (t) {
          grid.appendChild(el('div', {}, (t.rounds[k] || []).map(function (d) {
            var last = d.attempts.length ? d.attempts[d.attempts.length - 1].response : d.response;
            return el('div', { class: 'card small', 'data-decision': d.decision_id }, link({ decision: d.decision_id }, 'seat ' + fmt(d.seat) + ' ' + d.agent + ' ' + d.kind),
              ' → ' + fmt(d.action_token !== null ? d.action_token : d.action) + ' · points ' + fmt(d.points) + ' · ' + d.status, el('pre', { class: 'reply' }, last || ''));
          })));
        });
      });
      show(el('h2', {}, 'Side by side, aligned by round'), grid);
    }).catch(fail);
  }
  function exportPage(id, matchup) {
    loadCell(id).then(function (cell) {
      var e = episodeOf(cell, matchup);
      return loadEpisode(e).then(function (ds) {
        var md = CE.exporters.markdown(cell, e, ds), tex = CE.exporters.latex(cell, e, ds);
        function box(name, text, type) {
          var ta = el('textarea', { id: 'export-' + name, rows: 16, cols: 100, readonly: 'readonly' });
          ta.value = text;
          return [el('h3', {}, name), el('a', { href: URL.createObjectURL(new Blob([text], { type: type })), download: 'episode-' + e.key + (name === 'Markdown' ? '.md' : '.tex') }, 'download'), el('br'), ta];
        }
        show(crumbs(cell, e), el('h2', {}, 'Export of match-up ' + matchup), box('Markdown', md, 'text/markdown'), box('LaTeX', tex, 'application/x-tex'));
      });
    }).catch(fail);
  }
  function fail(err) { show(el('p', { class: 'warn' }, String(err && err.message ? err.message : err))); }

  // ---------------------------------------------------------------- routing
  function route() {
    var q = new URLSearchParams(location.hash.slice(1));
    window.scrollTo(0, 0);
    if (q.get('decision')) return decisionPage(q.get('decision'));
    switch (q.get('view')) {
      case 'boards': return boards();
      case 'board': return board(q.get('study'), q);
      case 'cells': return cells(q);
      case 'cell': return cellPage(q.get('cell'), q);
      case 'ep': return episodePage(q.get('cell'), q.get('m'), q.get('round'));
      case 'compare': return comparePage(q);
      case 'export': return exportPage(q.get('cell'), q.get('m'));
      case 'flags': return flags(q);
      case 'search': return CE.searchPage(q);
      case 'sensitivity': return CE.sensitivityPage();
      case 'pairs': return CE.pairsPage(q);
      default: return overview();
    }
  }
  CE.el = el; CE.link = link; CE.table = table; CE.fmt = fmt; CE.num = num; CE.findCell = findCell;
  CE.show = show; CE.fail = fail; CE.loadEpisode = loadEpisode; CE.cellLabel = cellLabel;
  CE.start = function () {
    if (!INDEX) { show(el('p', { class: 'warn' }, 'data/index.js did not load')); return; }
    document.getElementById('privacy').textContent = INDEX.privacy + (INDEX.raw_replies ? '' : ' Raw replies were left out of this build.');
    document.getElementById('jump').addEventListener('submit', function (ev) {
      ev.preventDefault();
      location.hash = hash({ decision: document.getElementById('jump-id').value.trim() });
    });
    document.getElementById('find').addEventListener('submit', function (ev) {
      ev.preventDefault();
      location.hash = hash({ view: 'search', q: document.getElementById('find-q').value.trim() });
    });
    window.addEventListener('hashchange', route);
    route();
  };
  document.addEventListener('DOMContentLoaded', function () { CE.start(); });
}());
