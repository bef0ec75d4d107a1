// The screens beside the live session (dogs, set-up, samples, station health, the
// researcher's): plain JavaScript that fetches the log routes (LogRoutes.swift) and draws
// with textContent only, so no name from the log is ever read as HTML.

extension Assets {
    static let screensJS = """
        'use strict';
        (() => {
        const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
        const box = () => document.getElementById('screen');
        const pct = (x) => (typeof x === 'number') ? Math.round(x) + ' %' : '–';
        const interval = (f) => f && typeof f.value === 'number'
          ? Math.round(f.value * 100) + ' % (' + Math.round(f.lower * 100) + '–' + Math.round(f.upper * 100) + ')' : '–';
        let csrf = null;
        async function get(path) {
          const r = await fetch(path);
          const j = await r.json().catch(() => null);
          if (r.status === 401) { location.href = '/login'; return null; }
          if (!r.ok) { box().append(el('p', j && j.error ? j.error.message : ('refused (' + r.status + ')'), 'error')); return null; }
          return j;
        }
        async function post(path, body) {
          if (!csrf) { const me = await (await fetch('/api/me')).json(); csrf = me.csrf; }
          const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf}, body: JSON.stringify(body)});
          const j = await r.json().catch(() => null);
          return r.ok ? {ok: true, j} : {ok: false, message: j && j.error ? j.error.message : ('refused (' + r.status + ')')};
        }
        // A table that scrolls inside itself on a phone, never the page.
        function table(heads, rows) {
          const wrap = el('div', undefined, 'table'); const t = el('table'); const tr = el('tr');
          heads.forEach((h) => tr.append(el('th', h))); t.append(tr);
          rows.forEach((row) => { const r = el('tr'); row.forEach((c) => { if (c instanceof Node) { const td = el('td'); td.append(c); r.append(td); } else r.append(el('td', c)); }); t.append(r); });
          wrap.append(t); return wrap;
        }
        function link(text, go) { const a = el('a', text); a.href = '#'; a.onclick = (e) => { e.preventDefault(); go(); }; return a; }
        function form(fields, button, submit) {
          const f = el('form'); const inputs = {};
          fields.forEach(([key, label, type]) => { const l = el('label', label + ' '); const i = el(type === 'textarea' ? 'textarea' : 'input'); if (type && type !== 'textarea') i.type = type; i.id = 'f-' + key; inputs[key] = i; l.append(i); f.append(l); });
          const b = el('button', button); b.type = 'submit'; const said = el('p', '', ''); said.setAttribute('role', 'status');
          f.append(b, said);
          f.addEventListener('submit', async (e) => { e.preventDefault(); const r = await submit(inputs); said.className = r.ok ? '' : 'error'; said.textContent = r.ok ? r.said : r.message; });
          return f;
        }
        function clear(title) { const b = box(); b.textContent = ''; b.append(el('h1', title)); return b; }

        async function dogs() {
          const b = clear('Dogs'); const list = await get('/api/dogs'); if (!list) return;
          b.append(table(['Dog', 'Born', 'Sessions', 'Trials', 'Last session'],
            list.map((d) => [link(d.name, () => dog(d.name)), d.born || '–', d.sessions, d.trials, d.lastSession || '–'])));
          if (window.lineupRole === 'trainer' || window.lineupRole === 'admin') {
            b.append(el('h2', 'Add a dog'));
            b.append(form([['name', 'Name'], ['born', 'Born (YYYY-MM-DD)'], ['notes', 'Notes', 'textarea']], 'Add the dog', async (i) => {
              const body = {name: i.name.value}; if (i.born.value) body.born = i.born.value; if (i.notes.value) body.notes = i.notes.value;
              const r = await post('/api/dogs', body); if (r.ok) { r.said = 'Added ' + body.name; setTimeout(dogs, 300); } return r;
            }));
          }
        }
        async function dog(name) {
          const b = clear(name); const page = await get('/api/dogs/' + encodeURIComponent(name)); if (!page) return;
          if (page.dog.notes) b.append(el('p', page.dog.notes));
          b.append(el('p', 'Notes are written when the dog is added; the station has no request to edit them.', 'hint'));
          b.append(el('h2', 'Progress'));
          b.append(table(['Program', 'Phase', 'Progress', 'Steps', 'Sessions', 'Trials', 'Last 20', 'Graduated'],
            page.progress.map((p) => [p.program || '–', p.phase, pct(p.progressPercent), p.stepsPassed + '/' + (p.phaseSteps || '?'), p.sessions, p.trials, pct(p.recentCorrectPercent), p.graduated || 'not yet'])));
          b.append(el('h2', 'Sessions'));
          b.append(table(['Started', 'Step', 'Mode', 'Trials', 'Hit', 'Miss', 'FA', 'CR', 'End'],
            page.sessions.map((s) => [s.started, (s.phase || '') + (s.step ? '/' + s.step : ''), s.mode, s.results.trials, s.results.hits, s.results.misses, s.results.falseAlerts, s.results.correctRejections, s.endedHow || 'running'])));
        }
        async function setup() {
          const b = clear('Session set-up'); const programs = await get('/api/programs'); if (!programs) return;
          for (const p of programs) {
            const d = el('details'); d.append(el('summary', p.name + ': ' + p.title));
            for (const s of p.steps) {
              d.append(el('h3', 'Step ' + s.step + ': ' + s.title));
              d.append(el('p', s.mode + '; lineup: ' + s.lineup + '; ' + s.criterion));
              for (const x of s.exercises) {
                d.append(el('p', 'Exercise ' + x.id + ', ' + x.title + ' (' + x.durationSeconds + ' s' + (x.repeats ? ', up to ' + x.repeats + ' times' : '') + (x.trials ? ', ' + x.trials + ' trials' : '') + '): ' + x.instruction));
              }
            }
            b.append(d);
          }
          const samples = await get('/api/samples');
          if (samples) b.append(el('p', 'Samples in the registry: ' + (samples.map((s) => s.label + ' (' + s.kind + ')').join(', ') || 'none'), 'hint'));
          b.append(el('p', 'Start the session on the Live screen, with the program and step chosen here.', 'hint'));
          if (window.lineupRole === 'trainer' || window.lineupRole === 'admin') {
            b.append(el('h2', 'A comment on a session, after it'));
            b.append(form([['session', 'Session id'], ['text', 'Comment', 'textarea']], 'Add the comment', async (i) => {
              const r = await post('/api/sessions/' + encodeURIComponent(i.session.value) + '/note', {text: i.text.value}); r.said = 'Comment added'; return r;
            }));
          }
        }
        async function samples() {
          const b = clear('Samples'); const list = await get('/api/samples'); if (!list) return;
          b.append(table(['Sample', 'Kind', 'Diagnosis', 'Source', 'Uses', 'Notes'],
            list.map((s) => [link(s.label, () => sample(s.label)), s.kind, s.diagnosis || '–', s.source || '–', (s.uses === undefined ? '–' : s.uses), s.notes])));
          // While a double-blind session runs the counts would say which samples are in use.
          const withheld = list.find((s) => s.usesWithheld);
          if (withheld) b.append(el('p', 'Uses: ' + withheld.usesWithheld + '.', 'hint'));
        }
        async function sample(label) {
          const b = clear('Sample ' + label); const d = await get('/api/samples/' + encodeURIComponent(label)); if (!d) return;
          const s = d.sample;
          b.append(table(['', ''], [['Kind', s.kind], ['Diagnosis', s.diagnosis || '–'], ['Source', s.source || '–'], ['Collection', s.collection || '–'], ['Processing', s.processing || '–'], ['Collected', s.collectedOn || '–'], ['Added', s.added], ['Used', s.uses + ' trial(s)']]));
          b.append(el('h2', 'Used with'));
          b.append(table(['Dog', 'Uses', 'Last'], d.usedBy.map((u) => [u.dog, u.uses, u.lastUsed])));
          b.append(el('h2', 'Notes'));
          if (!d.notes.length) b.append(el('p', 'No notes.', 'hint'));
          d.notes.forEach((n) => b.append(el('p', n.time + ': ' + n.text)));
        }
        async function health() {
          const b = clear('Station health'); const h = await get('/api/health'); if (!h) return;
          const s = h.status;
          b.append(table(['', ''], [
            ['Sound', s.audio], ['GPIO', s.gpio], ['Clicks (failed)', s.clicks + ' (' + s.failedClicks + ')'],
            ['Free space for the log', (s.logFreeMegabytes === undefined ? '–' : s.logFreeMegabytes + ' MB')],
            ['Events logged (lost)', (s.logWritten || 0) + ' (' + (s.logLost || 0) + ')'], ['Log error', s.logError || 'none'],
            ['Edges (dropped)', s.edges + ' (' + s.droppedEdges + ')'], ['Up', Math.round(s.uptimeSeconds) + ' s'],
            ['libgpiod', h.version.libgpiod], ['alsa-lib', h.version.alsaLib], ['Log', h.log]]));
          b.append(el('h2', 'Sensors'));
          const faults = s.sensorFaults || {};
          b.append(table(['Station', 'Faults'], Object.keys(faults).map((k) => [k, faults[k]])));
          (s.flaggedStations || []).forEach((f) => b.append(el('p', JSON.stringify(f), 'error')));
        }
        // The researcher's screens. Figures are printed as lineupctl's stats and session show
        // print them (printf's %.1f, %.2f): fixed() rounds an exact tie to even, as glibc's
        // printf does, where toFixed rounds it up (1 of 16 is 6.25 %: printf says 6.2).
        function fixed(x, digits) {
          // x is exactly halfway between two printed values only when x * 2^(digits+1) is an
          // odd integer (multiplying by a power of two is exact; x * 10^digits is not).
          if (Object.is(x, -0)) return '-' + (0).toFixed(digits); // printf keeps the sign of -0
          const half = x * Math.pow(2, digits + 1);
          if (!Number.isInteger(half) || half % 2 === 0) return x.toFixed(digits);
          const down = Math.floor(x * Math.pow(10, digits));
          return ((down % 2 === 0 ? down : down + 1) / Math.pow(10, digits)).toFixed(digits);
        }
        const wilson = (p) => (p && typeof p.value === 'number' && typeof p.lower === 'number' && typeof p.upper === 'number')
          ? fixed(p.value * 100, 1) + ' % (' + fixed(p.lower * 100, 1) + '-' + fixed(p.upper * 100, 1) + ', ' + p.successes + '/' + p.trials + ')' : '-';
        const number = (x, digits) => (typeof x === 'number') ? fixed(x, digits) : '-';
        const spread = (s) => s ? fixed(s.median / 1000, 2) + ' s (' + fixed(s.q1 / 1000, 2) + '-' + fixed(s.q3 / 1000, 2) + ')' : '-';
        const seconds = (ms) => (typeof ms === 'number') ? fixed(ms / 1000, 2) + ' s' : '-';
        const stepOf = (s) => (s.phase || '') + (s.step ? '/' + s.step : '');
        function back() { const p = el('p'); p.append(link('← Research', research)); return p; }
        const exports = ['trials', 'sessions', 'events', 'samples', 'milestones', 'dogs'];
        async function research() {
          const b = clear('Research'); b.append(el('p', 'Read only: the log as lineupctl reads it.', 'hint'));
          b.append(el('h2', 'Statistics'));
          const by = el('p');
          [['By dog', 'dog'], ['By session', 'session'], ['By sample', 'sample'], ['By station', 'station']]
            .forEach(([t, g], i) => { if (i) by.append(document.createTextNode(' · ')); const a = link(t, () => stats(g)); a.id = 'stats-' + g; by.append(a); });
          b.append(by);
          b.append(el('h2', 'Report and exports'));
          const dl = el('p'); const report = el('a', 'Report (HTML)'); report.href = '/api/report'; report.id = 'report-link'; dl.append(report);
          exports.forEach((w) => ['csv', 'jsonl'].forEach((f) => {
            const a = el('a', w + '.' + f); a.href = '/api/export?what=' + w + '&format=' + f; a.setAttribute('download', w + '.' + f); a.id = 'export-' + w + '-' + f;
            dl.append(document.createTextNode(' · '), a);
          }));
          b.append(dl);
          b.append(el('h2', 'Sessions'));
          const sessions = await get('/api/sessions'); if (!sessions) return;
          b.append(table(['Started', 'Dog', 'Step', 'Mode', 'Trials', 'Hit', 'Miss', 'FA', 'CR', 'End'],
            sessions.map((s) => [link(s.started, () => session(s.id)), s.dog, stepOf(s), s.mode, s.results.trials, s.results.hits, s.results.misses, s.results.falseAlerts, s.results.correctRejections, s.endedHow || 'running'])));
        }
        async function session(id) {
          const b = clear('Session'); b.append(back());
          const s = await get('/api/sessions/' + encodeURIComponent(id)); if (!s) return;
          b.querySelector('h1').textContent = 'Session of ' + s.dog;
          const f = s.figures;
          b.append(table(['', ''], [
            ['Session', s.id.slice(0, 8)], ['Dog', s.dog], ['Handler', s.handler || '–'], ['Program', s.program || '–'], ['Step', stepOf(s) || '–'],
            ['Mode', s.mode], ['Started', s.started], ['Ended', s.ended ? s.ended + ' (' + s.endedHow + (s.endDetail ? ': ' + s.endDetail : '') + ')' : 'running'],
            ['Trials', s.results.trials + ': ' + s.results.hits + ' hit, ' + s.results.misses + ' miss, ' + s.results.falseAlerts + ' false alert, ' + s.results.correctRejections + ' correct rejection, ' + s.results.aborted + ' aborted'],
            ['Correct', wilson(s.correct)], ['Sensitivity', wilson(f.sensitivity)], ['Specificity', wilson(f.specificity)],
            ['PPV', wilson(f.positivePredictiveValue)], ["d′", number(f.dPrime, 2)], ['Latency (IQR)', spread(f.latency)]]));
          b.append(el('h2', 'Trials'));
          // The layout as the log has it, once the session is over.
          const over = !!s.endedHow;
          b.append(table(['#', 'Outcome', 'Indicated', 'Latency', 'Layout', 'Note'], s.trials.map((t) => [
            t.number, t.outcome, (t.indicatedStation === undefined || t.indicatedStation === null) ? '–' : t.indicatedStation, seconds(t.latencyMs),
            over ? t.layout.map((l) => l.station + ': ' + (l.sample || 'no sample') + ' (' + l.kind + ')' + (l.indicated ? ' indicated' : '')).join('; ') : 'once the session ends',
            t.corrects ? 'corrected (was ' + t.corrects.slice(0, 8) + '): ' + (t.reason || '') : (t.reason || '')])));
          if (!over) b.append(el('p', 'The layouts are shown once the session ends.', 'hint'));
          b.append(el('h2', 'Samples'));
          b.append(table(['Sample', 'Kind', 'Presented', 'Indicated'], s.samples.map((x) => [x.label || 'blank', x.kind, x.presented, x.indicated])));
          b.append(el('h2', 'Comments'));
          if (!s.comments.length && !s.improvementSuggestions.length) b.append(el('p', 'None.', 'hint'));
          s.comments.forEach((c) => b.append(el('p', c)));
          s.improvementSuggestions.forEach((c) => b.append(el('p', 'Suggestion: ' + c)));
        }
        // One table per grouping, the columns of lineupctl stats --by.
        async function stats(by) {
          const b = clear('Statistics by ' + by); b.append(back());
          const rows = await get('/api/stats?by=' + encodeURIComponent(by)); if (!rows) return;
          const stations = by === 'sample' || by === 'station';
          const heads = [by.charAt(0).toUpperCase() + by.slice(1)];
          if (by === 'session') heads.push('Started');
          if (by === 'sample') heads.push('Kind');
          heads.push('Trials');
          heads.push(...(stations ? ['Aborted', 'Target hit', 'Target missed', 'Control FA', 'Control passed', 'Control not examined', 'Blank indicated', 'Blank passed'] : ['Hit', 'Miss', 'FA', 'CR', 'Aborted']));
          heads.push('Sensitivity', 'Specificity', 'PPV', 'FA/trial', "d′", 'c', 'Latency (IQR)');
          b.append(table(heads, rows.map((r) => {
            const row = [by === 'session' ? link(r.group, () => session(r.groupId)) : r.group];
            if (by === 'session') row.push(r.started || '-');
            if (by === 'sample') row.push(r.kind || '-');
            row.push(r.results.trials);
            if (stations) {
              const p = r.presentations; const k = r.kind;
              const cells = (xs, applies) => xs.map((x) => applies ? x : '-');
              const control = !k || k === 'control' || k === 'distractor';
              row.push(r.results.aborted, ...cells([p.hits, p.misses], !k || k === 'target'), ...cells([p.falseAlerts, p.correctRejections, p.notExamined], control), ...cells([p.blankIndicated, p.blankPassed], !k || k === 'blank'));
            } else row.push(r.results.hits, r.results.misses, r.results.falseAlerts, r.results.correctRejections, r.results.aborted);
            row.push(wilson(r.sensitivity), wilson(r.specificity), wilson(r.positivePredictiveValue), number(r.falseAlertsPerTrial, 3), number(r.dPrime, 2), number(r.criterion, 2), spread(r.latency));
            return row;
          })));
          b.append(el('p', 'Proportions with their 95 % Wilson intervals and counts; latency is the median from the start cue to the first indication (interquartile range). docs/figures.md defines each.', 'hint'));
          if (stations) b.append(el('p', 'Trials: scored and aborted trials in which the ' + by + ' stood; the verdicts count it once per scored trial.', 'hint'));
        }
        const screens = {dogs, setup, samples, health, research};
        function show(name) {
          document.body.dataset.screen = name;
          document.querySelectorAll('#nav button').forEach((b) => b.classList.toggle('on', b.dataset.go === name));
          if (screens[name]) screens[name]();
        }
        document.querySelectorAll('#nav button').forEach((b) => { b.onclick = () => show(b.dataset.go); });
        fetch('/api/me').then((r) => r.ok ? r.json() : null).then((me) => { if (me) { window.lineupRole = me.role; csrf = me.csrf; } });
        })();
        """

    static let screensCSS = """
        nav#nav { display: flex; flex-wrap: wrap; gap: 4px; padding: 6px 12px; background: #dde3ea; }
        nav#nav button { padding: 6px 10px; font-size: 0.9em; }
        nav#nav button.on { background: #234; color: #fff; }
        body[data-screen]:not([data-screen=live]) main > section:not(#screen) { display: none; }
        body:not([data-screen]) #screen, body[data-screen=live] #screen { display: none; }
        .table { max-width: 100%; overflow-x: auto; }
        /* The body breaks words anywhere; a table would then squeeze to a letter a line rather
           than scroll inside its box. */
        .table table { overflow-wrap: normal; }
        table { border-collapse: collapse; font-size: 0.85em; }
        th, td { border-bottom: 1px solid #ccd; padding: 4px 6px; text-align: left; vertical-align: top; }
        .hint { color: #555; font-size: 0.9em; }
        """
}
