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
          b.append(el('h2', 'Notes'));
          b.append(el('p', page.dog.notes || 'No notes yet.'));
          if (page.notes.length > 1) {
            const d = el('details'); d.append(el('summary', 'Earlier notes (' + (page.notes.length - 1) + ')'));
            page.notes.slice(0, -1).reverse().forEach((n) => d.append(el('p', n.time + ': ' + n.text)));
            b.append(d);
          }
          if (window.lineupRole === 'trainer' || window.lineupRole === 'admin') {
            b.append(form([['text', 'New notes (the earlier ones are kept)', 'textarea']], 'Save the notes', async (i) => {
              const r = await post('/api/dogs/' + encodeURIComponent(name) + '/note', {text: i.text.value});
              if (r.ok) { r.said = 'Notes saved'; setTimeout(() => dog(name), 300); } return r;
            }));
            const t = document.getElementById('f-text'); if (t && page.dog.notes) t.value = page.dog.notes;
          }
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
            list.map((s) => [link(s.label, () => sample(s.label)), s.kind, s.diagnosis || '–', s.source || '–', s.uses, s.notes])));
        }
        async function sample(label) {
          const b = clear('Sample ' + label); const d = await get('/api/samples/' + encodeURIComponent(label)); if (!d) return;
          const s = d.sample;
          b.append(table(['', ''], [['Kind', s.kind], ['Diagnosis', s.diagnosis || '–'], ['Source', s.source || '–'], ['Collected', s.collectedOn || '–'], ['Used', s.uses + ' trial(s)']]));
          b.append(el('h2', 'Used with'));
          b.append(table(['Dog', 'Uses', 'Last'], d.usedBy.map((u) => [u.dog, u.uses, u.lastUsed])));
          b.append(el('h2', 'Notes')); d.notes.forEach((n) => b.append(el('p', n.time + ': ' + n.text)));
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
          // Each input's level, redrawn from /api/status once a second while this screen is open.
          b.append(el('h2', 'Levels now'));
          const levels = el('div'); levels.id = 'levels'; b.append(levels);
          const since = (x) => x < 60 ? x.toFixed(1) + ' s' : Math.floor(x / 60) + ' min ' + Math.round(x % 60) + ' s';
          const drawLevels = (st) => {
            levels.textContent = '';
            if (st.stationLevelsWithheld) levels.append(el('p', 'The levels of the stations are withheld until the double-blind session ends.', 'hint'));
            levels.append(table(['Input', 'Now', 'Since', 'At (UTC)'], (st.inputLevels || []).map((l) =>
              [l.input, el('span', l.active ? (l.isStation ? 'active (nose)' : 'pressed') : 'clear', l.active ? 'level-on' : ''), since(l.secondsSinceChange), l.changedAt.slice(11, 21)])));
          };
          drawLevels(s);
          const timer = setInterval(async () => {
            if (document.body.dataset.screen !== 'health' || !levels.isConnected) { clearInterval(timer); return; }
            const r = await fetch('/api/status').catch(() => null);
            if (r && r.ok) drawLevels(await r.json());
          }, 1000);
        }
        async function research() {
          const b = clear('Research'); b.append(el('p', 'Read only.', 'hint'));
          const dl = el('p'); [['Report (HTML)', '/api/report'], ['Trials CSV', '/api/export?what=trials'], ['Sessions CSV', '/api/export?what=sessions'], ['Events CSV', '/api/export?what=events'], ['Samples CSV', '/api/export?what=samples'], ['Milestones CSV', '/api/export?what=milestones']]
            .forEach(([t, h]) => { const a = el('a', t); a.href = h; dl.append(a, document.createTextNode(' · ')); });
          b.append(dl);
          const stats = await get('/api/stats?by=dog');
          if (stats) b.append(el('h2', 'By dog'), table(['Dog', 'Trials', 'Sensitivity (95 %)', 'Specificity (95 %)'], stats.map((r) => [r.group, r.results ? r.results.trials : r.trials, interval(r.sensitivity), interval(r.specificity)])));
          const sessions = await get('/api/sessions');
          if (sessions) b.append(el('h2', 'Sessions'), table(['Started', 'Dog', 'Step', 'Mode', 'Trials', 'Hit', 'Miss', 'FA', 'CR'], sessions.map((s) => [s.started, s.dog, (s.phase || '') + (s.step ? '/' + s.step : ''), s.mode, s.results.trials, s.results.hits, s.results.misses, s.results.falseAlerts, s.results.correctRejections])));
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
        table { border-collapse: collapse; font-size: 0.85em; }
        th, td { border-bottom: 1px solid #ccd; padding: 4px 6px; text-align: left; vertical-align: top; }
        .hint { color: #555; font-size: 0.9em; }
        .level-on { font-weight: bold; color: #060; }
        """
}
