/* Run-wide search over the replies (#view=search&q=…). The build wrote, per word of three or
   more letters or digits, the episodes whose replies hold it (data/words/<bucket>.js, see
   coopeval.explorer.search_index); the page loads the bucket of each query word, keeps the
   episodes holding every word, then reads those episodes one after the other (a progress line
   counts them) and lists the decisions whose replies hold every word, up to LIMIT. */
(function () {
  'use strict';
  var CE = window.CE, el = CE.el, link = CE.link, fmt = CE.fmt;
  var LIMIT = 200;
  var WORD = /[\p{L}\p{N}]{3,}/gu;

  function words(text) {
    var seen = {}, out = [];
    (text.toLowerCase().match(WORD) || []).forEach(function (w) { if (!seen[w]) { seen[w] = 1; out.push(w); } });
    return out;
  }
  function wordBucket(word, n) {
    var h = 0;
    Array.from(word).forEach(function (ch) { h = (h * 31 + ch.codePointAt(0)) % n; });  // over code points, as the build
    return h;
  }
  function postings(word, index) {
    var b = wordBucket(word, index.buckets);
    return CE.load('words:' + b, 'data/words/' + b + '.js').then(function (m) {
      return Object.prototype.hasOwnProperty.call(m, word) ? m[word] : [];
    });
  }
  function intersect(lists) {
    var out = lists[0];
    lists.slice(1).forEach(function (l) {
      var keep = {};
      l.forEach(function (x) { keep[x] = 1; });
      out = out.filter(function (x) { return keep[x]; });
    });
    return out;
  }
  function episodeRow(number, index) {
    var f = Math.floor(number / index.per_file);
    return CE.load('wordeps:' + f, 'data/words/ep' + f + '.js').then(function (rows) { return rows[number - f * index.per_file]; });
  }
  function replies(d) {
    var all = [d.response || ''];
    d.attempts.forEach(function (a) { all.push(a.response || ''); });
    return all.join('\n').toLowerCase();
  }
  function form(query) {
    var input = el('input', { id: 'search-q', size: 40, placeholder: 'words in the replies' });
    input.value = query || '';
    var f = el('form', { id: 'search-form' }, input, ' ', el('button', { type: 'submit' }, 'search the run'));
    f.addEventListener('submit', function (ev) { ev.preventDefault(); location.hash = '#view=search&q=' + encodeURIComponent(input.value.trim()); });
    return f;
  }
  function page(q) {
    var query = q.get('q') || '';
    var index = CE.store.index.search;
    var progress = el('p', { id: 'search-progress' });
    var results = el('div', { id: 'search-results' });
    CE.show(el('h2', {}, 'Search the replies of the run'), form(query),
      el('p', { class: 'note' }, 'Finds the decisions whose replies (every attempt) hold each word of three or more letters or digits, case-insensitive; up to ' + LIMIT + ' decisions.'),
      progress, results);
    if (!index) { progress.textContent = 'This site was built without raw replies: there is nothing to search.'; return; }
    var ws = words(query);
    if (!ws.length) { progress.textContent = query ? 'Give a word of three or more letters or digits.' : ''; return; }
    var hits = [];
    var table = el('table', { class: 'hits search' }, el('tr', {}, ['decision', 'cell', 'match-up', 'round', 'seat', 'agent', 'kind', 'status'].map(function (h) { return el('th', {}, h); })));
    results.appendChild(table);
    Promise.all(ws.map(function (w) { return postings(w, index); })).then(function (lists) {
      var episodes = intersect(lists);
      var done = 0;
      function say(end) {
        progress.textContent = (end ? 'Done: ' : 'Searching: ') + done + ' of ' + episodes.length + ' episode(s) read, ' + hits.length + ' decision(s) found' +
          (hits.length >= LIMIT ? ' (the first ' + LIMIT + '; add a word to narrow)' : '') + '.';
        if (end) progress.className = 'done';
      }
      say(false);
      function next(i) {
        if (i >= episodes.length || hits.length >= LIMIT) { say(true); return null; }
        return episodeRow(episodes[i], index).then(function (row) {
          return CE.loadEpisode({ key: row[1], parts: row[2] }).then(function (ds) {
            var cell = CE.findCell(row[0]);
            ds.forEach(function (d) {
              if (hits.length >= LIMIT) return;
              var text = replies(d);
              if (!ws.every(function (w) { return text.indexOf(w) >= 0; })) return;
              hits.push(d);
              table.appendChild(el('tr', {}, el('td', {}, link({ decision: d.decision_id }, d.decision_id)),
                el('td', {}, link({ view: 'cell', cell: row[0] }, cell ? CE.cellLabel(cell) : row[0])), el('td', {}, d.matchup_id || ''), el('td', {}, fmt(d.round)),
                el('td', {}, fmt(d.seat)), el('td', {}, d.agent), el('td', {}, d.kind), el('td', { class: d.status === 'failed' ? 'failed' : null }, d.status)));
            });
            done += 1;
            say(false);
            return next(i + 1);
          });
        });
      }
      return next(0);
    }).catch(CE.fail);
  }
  CE.searchPage = page;
  CE.searchForm = form;
}());
