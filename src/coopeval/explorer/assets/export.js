/* Export of one episode as Markdown and as a standalone LaTeX document (for a paper's appendix).
   LaTeX: the ten special characters # $ % & ~ _ ^ \ { } and < > are written as commands, so any
   prompt or reply text is typeset verbatim-like without breaking the document. */
(function () {
  'use strict';
  var CE = window.CE;
  var TEX = {
    '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', '$': '\\$', '&': '\\&', '#': '\\#', '%': '\\%', '_': '\\_',
    '~': '\\textasciitilde{}', '^': '\\textasciicircum{}', '<': '\\textless{}', '>': '\\textgreater{}'
  };
  function tex(s) { return String(s === null || s === undefined ? '' : s).replace(/[\\{}$&#%_~^<>]/g, function (c) { return TEX[c]; }); }
  function texBlock(s) {
    var lines = String(s === null || s === undefined ? '' : s).split(/\r?\n/);
    return '\\begin{flushleft}\\ttfamily\\small\n' + lines.map(function (l) { return l.trim() === '' ? '\\medskip' : tex(l) + '\\par'; }).join('\n') + '\n\\end{flushleft}\n';
  }
  function fence(s) {
    var runs = String(s).match(/`+/g) || [], n = 3;
    runs.forEach(function (r) { if (r.length >= n) n = r.length + 1; });
    var f = new Array(n + 1).join('`');
    return f + 'text\n' + s + '\n' + f + '\n';
  }
  function action(d) { return d.action_token !== null && d.action_token !== undefined ? d.action_token : d.action; }
  function title(cell, e) { return cell.study + ' / ' + cell.mechanism + ' / ' + cell.game + ' / ' + cell.run + ' / match-up ' + e.matchup; }
  function sorted(ds) {
    return ds.slice().sort(function (a, b) { return (a.round || 0) - (b.round || 0) || (a.seat || 0) - (b.seat || 0); });
  }
  function promptText(d) {
    if (!d.attempts.length) return '';
    return d.attempts[0].messages.map(function (m) { return '[' + m.role + ']\n' + m.content; }).join('\n\n');
  }
  function replies(d) {
    if (!d.attempts.length) return [['reply', d.response || '']];
    return d.attempts.map(function (a, i) {
      var added = i ? a.messages.filter(function (m) { return m.role !== 'assistant'; }).map(function (m) { return m.content; }).join('\n') : '';
      return ['attempt ' + (i + 1) + (a.error ? ' (rejected: ' + a.error + ')' : ''), a.response || '', added];
    });
  }
  function markdown(cell, e, ds) {
    var out = ['# Episode: ' + title(cell, e), '', 'Cell `' + cell.cell_id + '`; agents: ' + e.agents.join(', ') + '.', ''];
    var round = null;
    sorted(ds).forEach(function (d) {
      if (d.round !== round) { round = d.round; out.push('## Round ' + round, ''); }
      out.push('### Seat ' + d.seat + ': ' + d.agent + ' (' + d.kind + ', ' + d.status + ')', '', 'Decision `' + d.decision_id + '`.', '', '**Prompt**', '', fence(promptText(d)));
      replies(d).forEach(function (r) {
        if (r[2]) out.push('**Re-ask**', '', fence(r[2]));
        out.push('**Reply, ' + r[0] + '**', '', fence(r[1]));
      });
      out.push('Action: ' + action(d) + '; points: ' + d.points + '.', '');
    });
    return out.join('\n');
  }
  function latex(cell, e, ds) {
    var out = ['\\documentclass{article}', '\\usepackage[T1]{fontenc}', '\\begin{document}', '\\section*{Episode: ' + tex(title(cell, e)) + '}',
      'Cell \\texttt{' + tex(cell.cell_id) + '}; agents: ' + tex(e.agents.join(', ')) + '.', ''];
    var round = null;
    sorted(ds).forEach(function (d) {
      if (d.round !== round) { round = d.round; out.push('\\subsection*{Round ' + tex(round) + '}'); }
      out.push('\\subsubsection*{Seat ' + tex(d.seat) + ': ' + tex(d.agent) + ' (' + tex(d.kind) + ', ' + tex(d.status) + ')}',
        'Decision \\texttt{' + tex(d.decision_id) + '}.', '', '\\paragraph{Prompt}', texBlock(promptText(d)));
      replies(d).forEach(function (r) {
        if (r[2]) out.push('\\paragraph{Re-ask}', texBlock(r[2]));
        out.push('\\paragraph{Reply, ' + tex(r[0]) + '}', texBlock(r[1]));
      });
      out.push('Action: ' + tex(action(d)) + '; points: ' + tex(d.points) + '.', '');
    });
    out.push('\\end{document}', '');
    return out.join('\n');
  }
  CE.exporters = { markdown: markdown, latex: latex, tex: tex };
}());
