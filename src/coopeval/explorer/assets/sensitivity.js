/* Prompt sensitivity (#view=sensitivity; docs/paraphrases.md): per study that varies the wording
   and per metric, each model's value under each prompt variant, the variance shares of model,
   variant, their interaction, context and residual, and per pair of models the difference under
   each variant and whether the ordering holds under every variant. The data is the store's
   sensitivity_* tables (INDEX.sensitivity, coopeval.explorer.sensitivity); every text enters the
   page as a text node (CE.el). */
(function () {
  'use strict';
  var CE = window.CE, el = CE.el, link = CE.link, table = CE.table;
  var TITLES = { coopeval: 'CoopEval: normalised metric, (x − NE) / (coop − NE), per game', gossip: 'Gossip: run means of the population models' };

  function number(v, digits) { return v === null || v === undefined ? '–' : v.toFixed(digits); }
  function signed(v) { return v === null || v === undefined ? '–' : (v > 0 ? '+' : '') + v.toFixed(4); }
  function percent(v) { return v === null || v === undefined ? '–' : (100 * v).toFixed(1) + ' %'; }

  function metricSection(study, m) {
    return el('section', { class: 'sensitivity', 'data-study': study, 'data-metric': m.metric },
      el('h3', {}, m.metric),
      el('h4', {}, 'Metric per prompt variant'),
      el('div', { class: 'values' }, table(['model'].concat(m.variants, ['contexts']), m.values.map(function (r) {
        return [r.model].concat(r.values.map(function (v) { return number(v, 4); }), [r.n_contexts]);
      }))),
      el('h4', {}, 'Variance shares'),
      el('div', { class: 'shares' }, table(['source', 'sum of squares', 'df', 'share'], m.shares.map(function (s) {
        return [s.source, s.sum_sq === null ? '–' : s.sum_sq.toPrecision(6), s.df, percent(s.share)];
      }))),
      el('h4', {}, 'Pairwise orderings (Δ = a − b)'),
      m.orderings.length ? el('div', { class: 'orderings' }, table(['a', 'b'].concat(m.variants.map(function (v) { return 'Δ ' + v; }), ['contexts', 'ordering holds']),
        m.orderings.map(function (o) {
          return [o.a, o.b].concat(o.deltas.map(signed), [o.n_contexts, o.holds ? 'yes' : 'no']);
        }))) : el('p', {}, 'No pair of models shares a context.'));
  }

  CE.sensitivityPage = function () {
    var reports = CE.store.index.sensitivity || [];
    if (!reports.length) { CE.show(el('p', { class: 'warn' }, 'This run has one prompt wording: no sensitivity report.')); return; }
    CE.show(el('p', { class: 'crumbs' }, link({}, 'overview'), ' › prompt sensitivity'),
      el('h2', {}, 'Prompt sensitivity'),
      el('p', { class: 'note' }, 'Each model\'s metric under each prompt variant (mean over the contexts it has under every variant), the share of the '
        + 'variance from model, variant, their interaction, context and residual, and whether each pairwise ordering has the same non-zero sign '
        + 'under every variant. Descriptive: no test of significance (docs/paraphrases.md).'),
      reports.map(function (r) {
        return [el('h2', {}, TITLES[r.study] || r.study), r.metrics.map(function (m) { return metricSection(r.study, m); })];
      }));
  };
}());
