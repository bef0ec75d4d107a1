// The screens beside the live session (dogs, set-up, samples, station health, the
// researcher's): plain JavaScript that fetches the log routes (LogRoutes.swift) and draws
// with textContent only, so no name from the log is ever read as HTML.

import SessionLog

extension Assets {
    /// Every table `lineupctl export --what` writes, as the Research screen lists them: one
    /// list, so a new table is offered on the page as soon as the route serves it.
    static let exportTables = ExportTable.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    static let screensJS = """
        'use strict';
        (() => {
        const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
        const box = () => document.getElementById('screen');
        const pct = (x) => (typeof x === 'number') ? Math.round(x) + ' %' : '–';
        const interval = (f) => f && typeof f.value === 'number'
          ? Math.round(f.value * 100) + ' % (' + Math.round(f.lower * 100) + '–' + Math.round(f.upper * 100) + ')' : '–';
        let csrf = null;
        // Each screen drawn counts; a reply that comes back after another screen was drawn is
        // dropped (it would be appended to the new screen: a quick tap on a link did so).
        let drawn = 0;
        async function get(path) {
          const mine = drawn;
          const r = await fetch(path);
          const j = await r.json().catch(() => null);
          if (mine !== drawn) return null;
          if (r.status === 401) { location.href = '/login'; return null; }
          if (!r.ok) { box().append(el('p', window.lineupField.plain(j && j.error ? j.error.message : ('refused (' + r.status + ')')), 'error')); return null; }
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
        function clear(title) { drawn++; const b = box(); b.textContent = ''; b.append(el('h1', title)); return b; }

        async function dogs() {
          const b = clear('Dogs'); const list = await get('/api/dogs'); if (!list) return;
          b.append(table(['Dog', 'Born', 'Sessions', 'Trials', 'Last session'],
            list.map((d) => [link(d.name, () => dog(d.name)), d.born || '–', (d.sessions === undefined ? '–' : d.sessions), (d.trials === undefined ? '–' : d.trials), d.lastSession || '–'])));
          // While a double-blind session runs its session and trials are left out of the counts.
          const withheld = list.find((d) => d.countsWithheld);
          if (withheld) b.append(el('p', 'Counts: ' + withheld.countsWithheld + '.', 'hint'));
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
            page.progress.map((p) => [p.program || '–', p.phase, pct(p.progressPercent), p.stepsPassed + '/' + (p.phaseSteps || '?'), p.sessions, p.trials, pct(p.recentCorrectPercent), p.graduated ? p.graduated + (p.criterion ? ' (' + p.criterion + ')' : '') : 'not yet'])));
          b.append(el('h2', 'Sessions'));
          b.append(table(['Started', 'Step', 'Mode', 'Trials', 'Hit', 'Miss', 'FA', 'CR', 'End'],
            page.sessions.map((s) => [s.started, (s.phase || '') + (s.step ? '/' + s.step : ''), s.mode, s.results.trials, s.results.hits, s.results.misses, s.results.falseAlerts, s.results.correctRejections, s.endedHow || 'running'])));
          b.append(el('h2', 'Exports of ' + name));
          b.append(exportLinks('dog', name, ['trials', 'sessions', 'milestones']));
        }
        // The study's session settings screen, which starts the session: the dog, the
        // program's step and exercise (its instruction and the lineup in words), the trials,
        // the duration, the handler's code and the samples picked from the registry. The
        // choices are kept between visits, so the next session starts from the last one's.
        const chosen = {};
        const kinds = ['target', 'control', 'distractor', 'blank'];
        function labelled(text, control, cls) { const l = el('label', text + ' ', cls); l.append(control); return l; }
        function choice(id, options, value) {
          const s = el('select'); s.id = id;
          options.forEach(([v, t]) => { const o = el('option', t); o.value = v; s.append(o); });
          if (options.some(([v]) => v === value)) s.value = value;
          return s;
        }
        async function role() {
          if (!window.lineupRole) { const me = await get('/api/me'); if (me) { window.lineupRole = me.role; csrf = me.csrf; } }
          return window.lineupRole;
        }
        async function setup() {
          const b = clear('Session set-up'); const programs = await get('/api/programs'); if (!programs) return;
          const runs = ['trainer', 'admin'].includes(await role());
          if (runs) {
            const dogs = await get('/api/dogs'); const samples = await get('/api/samples');
            if (dogs && samples && programs.length) b.append(setupForm(programs, dogs, samples));
          }
          b.append(el('h2', runs ? 'Every program in words' : 'The programs'));
          for (const p of programs) {
            const d = el('details'); d.append(el('summary', p.name + ': ' + p.title));
            for (const s of p.steps) {
              d.append(el('h3', 'Step ' + s.step + ': ' + s.title));
              d.append(el('p', s.mode + '; lineup: ' + s.lineup + '; ' + s.criterion));
              for (const x of s.exercises) d.append(el('p', 'Exercise ' + x.id + ', ' + x.title + ' (' + exerciseTime(x) + '): ' + x.instruction));
            }
            b.append(d);
          }
        }
        function exerciseTime(x) {
          return x.durationSeconds + ' s' + (x.repeats ? ', up to ' + x.repeats + ' repetitions' : '') + (x.trials ? ', ' + x.trials + ' trials' : '');
        }
        function setupForm(programs, dogs, samples) {
          const f = el('form'); f.id = 'setup-form';
          const dog = choice('setup-dog', dogs.map((d) => [d.name, d.name]).concat([['', 'A new dog…']]), chosen.dog);
          const newDog = el('input'); newDog.id = 'setup-new-dog'; newDog.autocomplete = 'off';
          const newDogRow = labelled('The new dog\\'s name', newDog); newDog.value = chosen.newDog || '';
          const program = choice('setup-program', programs.map((p) => [p.name, p.name + ': ' + p.title]), chosen.program);
          const stepBox = el('span'); const exerciseBox = el('span');
          const stepWords = el('p', '', 'hint'); stepWords.id = 'setup-step-words';
          const exerciseWords = el('p', '', 'hint'); exerciseWords.id = 'setup-exercise-words';
          const trials = el('input'); trials.id = 'setup-trials'; trials.type = 'number'; trials.min = '1'; trials.max = '10000'; trials.inputMode = 'numeric';
          const trialsRow = labelled('Trials', trials);
          // A trainer-led exercise's rounds, chosen within the program's bounds (lineupd checks them).
          const repetitions = el('input'); repetitions.id = 'setup-repetitions'; repetitions.type = 'number'; repetitions.min = '1'; repetitions.inputMode = 'numeric';
          const repetitionsWords = el('span', 'Rounds'); const repetitionsRow = el('label'); repetitionsRow.append(repetitionsWords, ' ', repetitions);
          const duration = el('input'); duration.id = 'setup-duration'; duration.type = 'number'; duration.min = '1'; duration.max = '3600'; duration.step = 'any'; duration.inputMode = 'decimal';
          const handler = el('input'); handler.id = 'setup-handler'; handler.autocomplete = 'off'; handler.value = chosen.handler || '';
          const unlabelled = el('input'); unlabelled.type = 'checkbox'; unlabelled.id = 'setup-unlabelled'; unlabelled.checked = !!chosen.unlabelled;
          const start = el('button', 'Start the session', 'go'); start.type = 'submit'; start.id = 'setup-start';
          const said = el('p', ''); said.id = 'setup-said'; said.setAttribute('role', 'alert');
          const currentProgram = () => programs.find((p) => p.name === program.value) || programs[0];
          const currentStep = () => currentProgram().steps.find((s) => s.step === (f.querySelector('#setup-step') || {}).value) || currentProgram().steps[0];
          const currentExercise = () => currentStep().exercises.find((x) => x.id === (f.querySelector('#setup-exercise') || {}).value) || currentStep().exercises[0];
          const isNew = () => dog.selectedIndex === dog.options.length - 1;
          function showDog() { newDogRow.hidden = !isNew(); }
          function showExercise(keep) {
            const x = currentExercise(); const s = currentStep();
            exerciseWords.textContent = x ? x.instruction + ' (' + exerciseTime(x) + ')' : 'This step has no exercise.';
            const led = s.mode === 'trainer-led';
            trialsRow.hidden = led; repetitionsRow.hidden = !led;
            if (led && x) {
              repetitions.max = String(x.repeats);
              repetitionsWords.textContent = 'Rounds (1 to ' + x.repeats + ', the program\\'s most)';
              if (!keep || !repetitions.value) repetitions.value = x.repeats;
            }
            if (!keep || !trials.value) trials.value = x && x.trials ? x.trials : '';
            if (!keep || !duration.value) duration.value = x ? x.durationSeconds : '';
          }
          function showStep(keep) {
            const s = currentStep();
            stepWords.textContent = s.description + ' Mode: ' + s.mode + '; lineup: ' + s.lineup + '; ' + s.criterion;
            exerciseBox.textContent = '';
            exerciseBox.append(labelled('Exercise', choice('setup-exercise', s.exercises.map((x) => [x.id, x.id + ': ' + x.title]), keep ? chosen.exercise : undefined)));
            f.querySelector('#setup-exercise').onchange = () => showExercise(false);
            showExercise(keep);
          }
          function showProgram(keep) {
            const p = currentProgram(); stepBox.textContent = '';
            stepBox.append(labelled('Step', choice('setup-step', p.steps.map((s) => [s.step, s.step + ': ' + s.title + ' (' + s.mode + ')']), keep ? chosen.step : undefined)));
            f.querySelector('#setup-step').onchange = () => showStep(false);
            showStep(keep);
          }
          f.append(labelled('Dog', dog), newDogRow, labelled('Program', program), stepBox, stepWords, exerciseBox, exerciseWords,
            trialsRow, repetitionsRow, labelled('Duration, s (of each repetition, or of each trial\\'s search)', duration),
            labelled('Handler code (a code, not a name)', handler));
          // The samples by kind, each with its use count; none ticked and "without samples"
          // left off is for lineupd to judge (a trainer-led round may run without).
          const picked = new Set(chosen.samples || []);
          const boxes = [];
          const fields = el('fieldset'); fields.id = 'setup-samples'; fields.append(el('legend', 'Samples from the registry'));
          for (const kind of kinds) {
            const ofKind = samples.filter((s) => s.kind === kind); if (!ofKind.length) continue;
            fields.append(el('h3', kind));
            for (const s of ofKind) {
              const c = el('input'); c.type = 'checkbox'; c.value = s.label; c.dataset.sample = s.label; c.checked = picked.has(s.label); boxes.push(c);
              fields.append(labelled(s.label + ' (' + s.kind + ')' + (s.uses === undefined ? '' : ', used in ' + s.uses + ' trial' + (s.uses === 1 ? '' : 's')) + (s.diagnosis ? '; ' + s.diagnosis : ''), c, 'check'));
            }
          }
          if (!boxes.length) fields.append(el('p', 'The registry has no samples yet: add them on the Samples screen.', 'hint'));
          fields.append(labelled('Without samples (stations by kind only)', unlabelled, 'check'));
          const showUnlabelled = () => boxes.forEach((c) => { c.disabled = unlabelled.checked; });
          unlabelled.onchange = showUnlabelled; showUnlabelled();
          // The morning's queue: these choices kept for later, each dog started in turn from Live.
          const later = el('button', 'Add to the queue'); later.type = 'button'; later.id = 'setup-queue';
          const laterWords = el('p', 'A queued dog starts on its next step from its progress (Today shows it), with the rounds, duration, samples and handler chosen here.', 'hint');
          f.append(fields, start, later, laterWords, said);
          dog.onchange = showDog; program.onchange = () => showProgram(false);
          showDog(); showProgram(true);
          function collect() {
            const s = currentStep(); const x = currentExercise();
            const fresh = isNew();
            const body = {dog: fresh ? newDog.value.trim() : dog.value, program: currentProgram().name, step: s.step};
            if (fresh) body.newDog = true;
            if (x) body.exercise = x.id;
            if (s.mode !== 'trainer-led' && trials.value) body.trials = parseInt(trials.value, 10);
            if (s.mode === 'trainer-led' && repetitions.value) body.repetitions = parseInt(repetitions.value, 10);
            if (duration.value) body.durationSeconds = parseFloat(duration.value);
            if (handler.value.trim()) body.handler = handler.value.trim();
            const labels = boxes.filter((c) => c.checked).map((c) => c.value);
            if (unlabelled.checked) body.unlabelled = true; else body.samples = labels;
            Object.assign(chosen, {dog: fresh ? '' : dog.value, newDog: newDog.value, program: body.program, step: s.step,
              exercise: body.exercise, handler: handler.value, unlabelled: unlabelled.checked, samples: labels});
            return {body, fresh};
          }
          later.onclick = async () => {
            const {body, fresh} = collect();
            if (fresh) { said.className = 'error'; said.textContent = 'Add the new dog on the Dogs screen first, then queue it.'; return; }
            const entry = {dog: body.dog, program: body.program};
            for (const k of ['repetitions', 'durationSeconds', 'samples', 'unlabelled', 'handler']) if (body[k] !== undefined) entry[k] = body[k];
            said.className = ''; said.textContent = 'Adding ' + body.dog + ' to the queue…';
            const r = await post('/api/queue', entry);
            if (!r.ok) { said.className = 'error'; said.textContent = window.lineupField.plain(r.message); return; }
            said.textContent = body.dog + ' is number ' + r.j.place + ' in the queue' + (r.j.next ? ', on ' + window.lineupField.nextWords({next: r.j.next, repetitions: entry.repetitions}) + ' as its progress stands now' : '') + ' (see Today, or Live once no session runs).';
            window.lineupField.refreshQueue(true);
          };
          f.addEventListener('submit', async (e) => {
            e.preventDefault();
            const {body, fresh} = collect();
            said.className = ''; said.textContent = 'Starting…'; start.disabled = true;
            const r = await post('/api/session/start', body);
            start.disabled = false;
            // A refusal stays beside the form, every choice kept, to be corrected and sent again.
            if (!r.ok) { said.className = 'error'; said.textContent = window.lineupField.plain(r.message); return; }
            said.textContent = '';
            if (fresh) { chosen.dog = body.dog; chosen.newDog = ''; }
            const message = document.getElementById('message');
            message.className = r.j.warning ? 'error' : '';
            message.textContent = window.lineupField.plain((r.j.message || 'The session started') + (r.j.warning ? ' ' + r.j.warning : ''));
            show('live');
          });
          return f;
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
        // The same words as `lineupctl status`'s "Lab sync" line.
        function labSyncText(x) {
          if (!x) return 'this lineupd says nothing of a lab sync';
          if (!x.reporting) return 'not reporting (no lineup-sync has reported since lineupd started)';
          const parts = [];
          if (x.behindRows === undefined || x.behindRows === null) parts.push('behind: unknown (the store did not answer)');
          else if (x.behindRows === 0) parts.push('up to date (0 rows behind)');
          else parts.push(x.behindRows + ' rows behind' + (x.oldestUnsynced ? ', the oldest from ' + x.oldestUnsynced : ''));
          if (x.reportedAt) parts.push('reported ' + x.reportedAt);
          parts.push('last success ' + (x.lastSuccess || 'none since lineupd started'));
          if (x.lastError) parts.push('last error: ' + x.lastError);
          return parts.join('; ');
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
          // How far the lab store is behind this log, as lineup-sync last told lineupd.
          b.append(el('h2', 'Lab sync'));
          const sync = el('p'); sync.id = 'lab-sync'; b.append(sync);
          const drawSync = (st) => { sync.textContent = labSyncText(st.labSync); };
          drawLevels(s); drawSync(s);
          const timer = setInterval(async () => {
            if (document.body.dataset.screen !== 'health' || !levels.isConnected) { clearInterval(timer); return; }
            const r = await fetch('/api/status').catch(() => null);
            if (r && r.ok) { const st = await r.json(); drawLevels(st); drawSync(st); }
          }, 1000);
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
        const exports = [\(exportTables)];
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
            t.number, t.outcome, (t.indicatedStation === undefined || t.indicatedStation === null) ? '–' : (t.indicatedName || t.indicatedStation), seconds(t.latencyMs),
            over ? t.layout.map((l) => (l.name || l.station) + ': ' + (l.sample || 'no sample') + ' (' + l.kind + ')' + (l.indicated ? ' indicated' : '')).join('; ') : 'once the session ends',
            t.corrects ? 'corrected (was ' + t.corrects.slice(0, 8) + '): ' + (t.reason || '') : (t.reason || '')])));
          if (!over) b.append(el('p', 'The layouts are shown once the session ends.', 'hint'));
          b.append(el('h2', 'Samples'));
          b.append(table(['Sample', 'Kind', 'Presented', 'Indicated'], s.samples.map((x) => [x.label || 'blank', x.kind, x.presented, x.indicated])));
          b.append(el('h2', 'Comments'));
          if (!s.comments.length && !s.improvementSuggestions.length) b.append(el('p', 'None.', 'hint'));
          s.comments.forEach((c) => b.append(el('p', c)));
          s.improvementSuggestions.forEach((c) => b.append(el('p', 'Suggestion: ' + c)));
          if (['trainer', 'admin'].includes(await role())) {
            b.append(form([['comment', 'A comment on this session (kept with it in the log)', 'textarea']], 'Add the comment', async (i) => {
              const r = await post('/api/sessions/' + encodeURIComponent(s.id) + '/note', {text: i.comment.value});
              if (r.ok) { r.said = 'Comment added'; setTimeout(() => session(s.id), 300); } return r;
            }));
          }
          b.append(el('h2', "This session's exports"));
          b.append(exportLinks('session', s.id, ['trials', 'events']));
        }
        // Download links for one dog's or one session's rows, as `lineupctl export --dog/--session`.
        function exportLinks(by, value, tables) {
          const p = el('p');
          tables.forEach((w) => ['csv', 'jsonl'].forEach((f) => {
            const a = el('a', w + '.' + f); a.href = '/api/export?what=' + w + '&format=' + f + '&' + by + '=' + encodeURIComponent(value);
            a.id = 'export-' + by + '-' + w + '-' + f; p.append(a, ' ');
          }));
          return p;
        }
        // One table per grouping, the columns of lineupctl stats --by.
        async function stats(by) {
          const b = clear('Statistics by ' + by); b.append(back());
          const rows = await get('/api/stats?by=' + encodeURIComponent(by)); if (!rows) return;
          const stations = by === 'sample' || by === 'station';
          const heads = [by.charAt(0).toUpperCase() + by.slice(1)];
          if (by === 'session') heads.push('Started');
          if (by === 'sample') heads.push('Kind');
          // Each rate beside the counts it is computed from (docs/figures.md).
          heads.push('Trials', 'Aborted');
          if (!stations) heads.push('Hit trials', 'Miss trials', 'FA trials', 'CR trials', 'Correct');
          heads.push('Target hit', 'Target missed', 'Sensitivity', 'Control FA', 'Control passed', 'Control not examined', 'Specificity', 'Blank indicated', 'Blank passed', 'PPV', 'FA/trial', "d′", 'c', 'Latency (IQR)');
          if (by === 'sample') heads.push('Flag');
          b.append(table(heads, rows.map((r) => {
            const row = [by === 'session' ? link(r.group, () => session(r.groupId)) : r.group];
            if (by === 'session') row.push(r.started || '-');
            if (by === 'sample') row.push(r.kind || '-');
            row.push(r.results.trials, r.results.aborted);
            if (!stations) row.push(r.results.hits, r.results.misses, r.results.falseAlerts, r.results.correctRejections, wilson(r.trialAccuracy));
            const p = r.presentations; const k = r.kind;
            const cells = (xs, applies) => xs.map((x) => applies ? x : '-');
            const control = !k || k === 'control' || k === 'distractor';
            row.push(...cells([p.hits, p.misses], !k || k === 'target'), wilson(r.sensitivity), ...cells([p.falseAlerts, p.correctRejections, p.notExamined], control), wilson(r.specificity), ...cells([p.blankIndicated, p.blankPassed], !k || k === 'blank'));
            row.push(wilson(r.positivePredictiveValue), number(r.falseAlertsPerTrial, 3), number(r.dPrime, 2), number(r.criterion, 2), spread(r.latency));
            if (by === 'sample') row.push(r.sampleFlag && r.sampleFlag.flagged ? '⚑ flagged (p = ' + r.sampleFlag.p.toPrecision(2) + ')' : '');
            return row;
          })));
          b.append(el('p', 'Proportions with their 95 % Wilson intervals and counts; latency is the median from the start cue to the first indication (interquartile range). docs/figures.md defines each.', 'hint'));
          if (stations) b.append(el('p', 'Trials: scored and aborted trials in which the ' + by + ' stood; the verdicts count it once per scored trial.', 'hint'));
        }
        // Today: the day's sessions, running and past, and the sitting's queue, as the station's
        // page keeps them for every browser (/api/day), each named by dog, step and time.
        async function today() {
          const b = clear('Today'); const d = await get('/api/day'); if (!d) return;
          const editsQueue = ['trainer', 'admin'].includes(window.lineupRole);
          const counts = (x) => x.trials === undefined || x.trials === null ? '' : ' · ' + x.trials + (x.mode === 'trainer-led' ? ' round' : ' trial') + (x.trials === 1 ? '' : 's') + ', ' + x.hits + ' hit' + (x.hits === 1 ? '' : 's');
          const said = (x) => x.time + ' · ' + x.dog + ' · ' + (x.step || 'no step') + ' (' + x.mode + ')' + counts(x);
          const how = {ended: 'ended', 'cut-short': 'cut short', 'not ended': 'not ended', aborted: 'aborted'};
          b.append(el('h2', 'Running'));
          const running = el('p', d.running ? said(d.running) : 'No session is running.', d.running ? '' : 'hint'); running.id = 'day-running'; b.append(running);
          b.append(el('h2', 'Queued'));
          const queue = el('ol'); queue.id = 'day-queue';
          if (!d.queued.length) b.append(el('p', 'Nobody queued: add dogs from Set-up (Add to the queue).', 'hint'));
          d.queued.forEach((q) => {
            const li = el('li', q.dog + ' · ' + window.lineupField.nextWords(q) + ' · queued ' + q.queuedAt + ' by ' + q.queuedBy + ' ');
            li.dataset.dog = q.dog;
            if (editsQueue) {
              const drop = el('button', 'Remove'); drop.type = 'button'; drop.setAttribute('aria-label', 'Remove ' + q.dog + ' from the queue');
              drop.onclick = async () => { const r = await post('/api/queue/remove', {id: q.id}); if (!r.ok) alert(window.lineupField.plain(r.message)); window.lineupField.refreshQueue(true); today(); };
              li.append(drop);
            }
            queue.append(li);
          });
          b.append(queue);
          b.append(el('h2', 'Earlier today'));
          if (d.withheld) b.append(el('p', window.lineupField.plain(d.withheld), 'hint'));
          const past = el('ol'); past.id = 'day-past';
          d.past.forEach((x) => { const li = el('li', said(x) + ' · ' + (how[x.state] || x.state)); li.dataset.dog = x.dog; past.append(li); });
          if (!d.past.length) b.append(el('p', 'No session yet today.', 'hint')); else b.append(past);
        }
        const screens = {dogs, setup, samples, health, research, today};
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
        .level-on { font-weight: bold; color: #060; }
        """
}
