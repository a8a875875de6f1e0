/* Study-specific parts of the cell, episode and decision pages (docs/explorer.md). */
(function () {
  'use strict';
  var CE = window.CE, el = CE.el, table = CE.table, fmt = CE.fmt, link = CE.link;

  function parseJSON(text) { try { return JSON.parse(text); } catch (e) { return null; } }
  function flagsOf(cell) {
    var m = cell.extras && cell.extras.manifest && cell.extras.manifest[0];
    return m && m.condition_flags ? parseJSON(m.condition_flags) || {} : {};
  }

  // ---------------------------------------------------------------- CoopEval
  function coopevalCell(cell) {
    var x = cell.extras || {};
    if (!x.designs || !x.designs.length) return null;
    return [el('h3', {}, 'Design proposals (Mediation / Contracting)'),
      table(['designer', 'agent', 'seat', 'kind', 'design', 'status'], x.designs.map(function (d) { return [d.designer, d.agent, d.seat, d.design_kind, d.design, d.status]; }))];
  }
  function coopevalEpisode(cell, e) {
    var x = cell.extras || {};
    var mine = function (r) { return r.matchup_id === e.matchup; };
    var scores = (x.scores || []).filter(mine), votes = (x.votes || []).filter(mine), sel = (x.selections || []).filter(mine);
    return [scores.length ? [el('h3', {}, 'Scores (δ-weighted)'), table(['seat', 'agent', 'score', 'status'], scores.map(function (s) { return [s.seat, s.agent, s.score, s.status]; }))] : null,
      votes.length ? [el('h3', {}, 'Votes'), table(['voter seat', 'agent', 'option', 'approve'], votes.map(function (v) { return [v.voter_seat, v.agent, v.option, String(v.approve)]; }))] : null,
      sel.length ? [el('h3', {}, 'Selected design and signatures'), table(['kind', 'selected', 'designer', 'all signed', 'design', 'details'], sel.map(function (s) {
        return [s.design_kind, s.selected_index, s.selected_designer, String(s.all_signed), s.design, s.details];
      }))] : null];
  }

  // ---------------------------------------------------------------- gossip
  function gossipTimeline(cell) {
    var x = cell.extras || {};
    var rounds = x.rounds || [];
    if (!rounds.length) return null;
    var showTone = flagsOf(cell).show_tone !== false;
    var who = function (name, kind) { return el('span', { class: kind && kind !== 'honest' ? 'attacker' : null }, name + (kind && kind !== 'honest' ? ' [' + kind + ']' : '')); };
    // gossip_rounds names the pair by position; first_role / second_role name them as the testbed does
    var first = rounds[0].first_role || 'first agent', second = rounds[0].second_role || 'second agent';
    var tone = function (r) { return r.second_tone == null ? null : r.second_tone + (showTone ? '' : ' (hidden)'); };
    // [heading, value of a round, numeric]; the role columns no round of this testbed fills are left out
    var optional = [[first + ' action', function (r) { return r.first_action; }], [second + ' action', function (r) { return r.second_action; }],
      [first + ' amount', function (r) { return r.first_amount; }, true], [second + ' amount', function (r) { return r.second_amount; }, true],
      [second + "'s tone", tone], [second + "'s message", function (r) { return r.second_message; }],
      [first + ' reward', function (r) { return r.first_reward; }, true], [second + ' reward', function (r) { return r.second_reward; }, true]
    ].filter(function (c) { return rounds.some(function (r) { var v = c[1](r); return v != null && v !== ''; }); });
    var heads = ['round', first, second].concat(optional.map(function (c) { return c[0]; }), ['status']);
    return [el('h3', {}, 'Round timeline'),
      el('p', { class: 'note' }, 'Tone ' + (showTone ? 'shown to the agents' : 'hidden from the agents (recorded only)') + ' in this condition; attackers in red.'),
      el('table', { class: 'timeline' }, el('tr', {}, heads.map(function (h) { return el('th', {}, h); })),
        rounds.map(function (r) {
          return el('tr', {}, el('td', {}, fmt(r.round)), el('td', {}, who(r.first_agent, r.first_kind)), el('td', {}, who(r.second_agent, r.second_kind)),
            optional.map(function (c) { return el('td', { class: c[2] ? 'num' : null }, fmt(c[1](r))); }),
            el('td', {}, r.status || ''));
        })),
      x.agents && x.agents.length ? [el('h3', {}, 'Agents'), table(['agent', 'kind', 'cooperation', 'image score', 'discounted return', 'Gini'], x.agents.map(function (a) {
        return [a.agent, a.kind, a.cooperation_ratio, a.image_score, a.discounted_return, a.gini];
      }))] : null];
  }

  // ---------------------------------------------------------------- evolution
  function lineage(strategies) {
    var nodes = {}, order = [];
    strategies.forEach(function (s) {
      var n = nodes[s.agent_id];
      if (!n) { n = nodes[s.agent_id] = { s: s, rows: [], children: [] }; order.push(s.agent_id); }
      n.rows.push(s);
      if (s.generation === s.born_generation) n.s = s;
    });
    var roots = [];
    order.forEach(function (id) {
      var n = nodes[id], p = n.s.parent_id;
      if (p && nodes[p] && p !== id) nodes[p].children.push(n); else roots.push(n);
    });
    function item(n) {
      var s = n.s;
      return el('li', { class: 'strategy' }, el('b', {}, s.agent_id), ' born g' + fmt(s.born_generation) + (s.parent_id ? ' from ' + s.parent_id + ' (parent rank ' + fmt(s.parent_rank) + ')' : '') + ' · ' +
        n.rows.map(function (r) { return 'g' + r.generation + ': score ' + fmt(r.score) + ', rank ' + fmt(r.rank); }).join('; '),
        el('pre', { class: 'strategy-text' }, s.text || ''), n.children.length ? el('ul', { class: 'tree' }, n.children.map(item)) : null);
    }
    return el('ul', { class: 'tree lineage' }, roots.map(item));
  }
  function heat(pct) { var l = 100 - Math.max(0, Math.min(100, pct || 0)) * 0.55; return 'hsl(210,65%,' + l + '%)'; }
  function matrices(rows) {
    var groups = {}, order = [];
    rows.forEach(function (r) {
      var k = 'g' + r.generation + ' ' + r.strategy_id;
      if (!groups[k]) { groups[k] = []; order.push(k); }
      groups[k].push(r);
    });
    return order.map(function (k) {
      var g = groups[k], is = [], js = [], v = {};
      g.forEach(function (r) { if (is.indexOf(r.i) < 0) is.push(r.i); if (js.indexOf(r.j) < 0) js.push(r.j); v[r.i + ',' + r.j] = r; });
      is.sort(function (a, b) { return a - b; }); js.sort(function (a, b) { return a - b; });
      return [el('h4', {}, 'Strategy matrix ' + k + ' (mean donation %, rows i, columns j)'),
        el('table', { class: 'heat' }, el('tr', {}, el('th', {}, 'i \\ j'), js.map(function (j) { return el('th', {}, String(j)); })),
          is.map(function (i) {
            return el('tr', {}, el('th', {}, String(i)), js.map(function (j) {
              var r = v[i + ',' + j];
              return el('td', { style: { backgroundColor: heat(r ? r.percentage : 0) }, title: r ? r.samples + ' sample(s), ' + r.failed + ' failed' : '' }, r ? fmt(Math.round(r.percentage)) : '');
            }));
          }))];
    });
  }
  function evolutionCell(cell) {
    var x = cell.extras || {};
    return [x.generations && x.generations.length ? [el('h3', {}, 'Generations'), table(['generation', 'mean final', 'donation fraction', 'punish', 'refuse', 'failed', 'events'], x.generations.map(function (g) {
      return [g.generation, g.mean_final, g.donation_fraction, g.punish_frequency, g.refuse_frequency, g.failed_decisions, g.n_events];
    }))] : null,
      x.strategies && x.strategies.length ? [el('h3', {}, 'Lineage of strategies'), lineage(x.strategies),
        el('h3', {}, 'Strategies by generation'), table(['generation', 'agent', 'parent', 'rank', 'score', 'survived', 'text'], x.strategies.map(function (s) {
          return [s.generation, s.agent_id, s.parent_id, s.rank, s.score, String(s.survived), s.text];
        }))] : null,
      x.invasions && x.invasions.length ? [el('h3', {}, 'Invasion tests'), table(['generation', 'strategy', 'bot half', 'evolved mean', 'bot score', 'robust'], x.invasions.map(function (t) {
        return [t.generation, t.strategy_id, t.bot_half, t.evolved_mean_score, t.bot_score, String(t.robust)];
      }))] : null,
      x.matrices && x.matrices.length ? matrices(x.matrices) : null];
  }
  function evolutionEpisode(cell, e) {
    var m = /^g(\d+)\/(.+)\/game(\d+)$/.exec(e.matchup);
    var events = ((cell.extras || {}).events || []).filter(function (v) { return m && v.generation === +m[1] && v.context === m[2] && v.game === +m[3]; });
    if (!events.length) return null;
    return [el('h3', {}, 'Donation events'), table(['round', 'pair', 'donor', 'recipient', 'action', 'amount', '%', 'donor before', 'donor after', 'parse', 'decision'], events.map(function (v) {
      return [v.round, v.pair, v.donor, v.recipient, v.action, v.amount, v.percentage, v.donor_resources_before, v.donor_resources_after, v.parse_status, v.decision_id ? link({ decision: v.decision_id }, v.decision_id) : ''];
    }))];
  }

  var VIEWS = {
    coopeval: { cell: coopevalCell, episode: coopevalEpisode },
    gossip: { cell: gossipTimeline, episode: gossipTimeline },
    evolution: { cell: evolutionCell, episode: evolutionEpisode }
  };
  CE.studyViews = {
    cell: function (cell) { var v = VIEWS[cell.study]; return v ? v.cell(cell) : null; },
    episode: function (cell, e, ds) { var v = VIEWS[cell.study]; return v ? v.episode(cell, e, ds) : null; },
    decisionExtra: function () { return null; }
  };
}());
