import Hummingbird
import NIOCore

// The page's every asset, compiled into lineup-web: the station has no internet, so nothing
// is fetched from elsewhere. Plain HTML, CSS and JavaScript, no framework.

public enum Assets {
    public static func response(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static let loginHTML = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Lineup station: log in</title><link rel="stylesheet" href="/static/app.css"><link rel="stylesheet" href="/static/field.css">
        <link rel="manifest" href="/manifest.webmanifest"><link rel="icon" href="/static/icon.svg"><meta name="theme-color" content="#223344"></head>
        <body><main class="narrow">
        <h1>Lineup station</h1>
        <form id="login">
        <label>Name <input id="name" name="name" autocomplete="username" required></label>
        <label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
        <button type="submit" id="login-button">Log in</button>
        <p id="login-error" class="error" role="alert"></p>
        </form>
        <p class="hint">No account yet? Ask whoever looks after the station to make one for you.</p>
        </main><script src="/static/login.js"></script></body></html>
        """

    public static let loginJS = """
        'use strict';
        document.getElementById('login').addEventListener('submit', async (e) => {
          e.preventDefault();
          const error = document.getElementById('login-error');
          error.textContent = '';
          const body = JSON.stringify({name: document.getElementById('name').value,
                                       password: document.getElementById('password').value});
          try {
            const r = await fetch('/api/login', {method: 'POST', headers: {'Content-Type': 'application/json'}, body});
            if (r.ok) { location.href = '/'; return; }
            const j = await r.json().catch(() => null);
            error.textContent = j && j.error ? j.error.message : ('login failed (' + r.status + ')');
          } catch (x) { error.textContent = 'the station does not answer: ' + x; }
        });
        """

    static let appHTML = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Lineup station</title><link rel="stylesheet" href="/static/app.css"><link rel="stylesheet" href="/static/screens.css"><link rel="stylesheet" href="/static/field.css">
        <link rel="manifest" href="/manifest.webmanifest"><link rel="icon" href="/static/icon.svg"><meta name="theme-color" content="#223344"></head>
        <body>
        <header><span id="who"></span><button id="logout" class="small">Log out</button></header>
        <nav id="nav" aria-label="Screens"><button data-go="live" class="on">Live</button><button data-go="today">Today</button><button data-go="dogs">Dogs</button><button data-go="setup">Set-up</button><button data-go="samples">Samples</button><button data-go="health">Health</button><button data-go="research">Research</button></nav>
        <p id="live" class="notlive" role="status">Connecting to the station…</p>
        <main>
        <section id="now">
          <h1 id="state">…</h1>
          <p id="activity"></p>
          <div class="row"><div class="figure"><span id="timer">–</span><small>time left</small></div>
          <div class="figure"><span id="trial">–</span><small id="trial-word">trial</small></div></div>
          <p id="session"></p>
          <p id="result" class="result"></p>
          <p id="message" role="alert"></p>
        </section>
        <section id="resume-box" hidden aria-labelledby="resume-title">
          <h2 id="resume-title">A session was cut short</h2>
          <p id="resume-words"></p>
          <p id="resume-todo"></p>
          <button id="resume-button" type="button" class="go">Resume the session</button>
          <p id="resume-said" role="status"></p>
        </section>
        <section id="trainer-layout" hidden aria-labelledby="trainer-layout-title">
          <h2 id="trainer-layout-title">Where the target goes</h2>
          <ol id="trainer-stations" class="stations"></ol>
        </section>
        <section id="guess-box" hidden aria-labelledby="guess-title">
          <h2 id="guess-title">Your guess</h2>
          <p id="guess-words">Which station holds the target? Say it before the dog indicates.</p>
          <div id="guess-buttons" class="guesses"></div>
          <p id="guess-said" role="status"></p>
        </section>
        <section id="queue-next" hidden aria-labelledby="queue-title">
          <h2 id="queue-title">Next in the queue</h2>
          <p id="queue-words"></p>
          <button id="queue-start" type="button" class="go">Start the next session</button>
          <p id="queue-said" role="status"></p>
        </section>
        <section id="controls" hidden>
          <button id="setup-button" type="button">Set up a session</button>
          <details id="end-box"><summary>End the session</summary>
            <form id="end">
              <label>Improvement suggestions <textarea id="suggestions" rows="3"></textarea></label>
              <button type="submit" id="end-button">End session</button>
              <button type="button" id="abort" class="stop">Abort the trial</button>
            </form>
          </details>
        </section>
        <section id="ended" hidden>
          <h2>The session's result</h2>
          <p id="ended-summary"></p>
          <div class="table" tabindex="0" role="region" aria-label="The rounds"><table id="ended-rounds"></table></div>
          <h3>Improvement suggestions</h3>
          <ul id="ended-suggestions"></ul>
          <h3>Comments</h3>
          <ul id="ended-comments"></ul>
          <form id="comment-form">
            <label>A comment on the session <textarea id="comment" rows="3"></textarea></label>
            <button type="submit" id="comment-button">Add the comment</button>
            <p id="comment-said" role="status"></p>
          </form>
          <button type="button" id="ended-setup">Set up the next session</button>
        </section>
        <section id="assistant" hidden>
          <h2>Load the next trial</h2>
          <ol id="layout" class="layout"></ol>
          <button id="loaded" class="big go">Loaded</button>
        </section>
        <section id="hidden-layout" hidden><p id="hidden-why"></p></section>
        <section><h2 id="events-title">Events</h2><ol id="events" class="events" tabindex="0" aria-labelledby="events-title"></ol></section>
        <section id="screen"></section>
        </main>
        <div id="pad" hidden role="group" aria-label="The trainer's buttons">
          <p id="pad-said" role="status" aria-live="polite"></p>
          <button id="ready" type="button">&#9654; Ready<small id="ready-why"></small></button>
          <div class="pad-row">
            <button id="error" type="button">&#10005; Error</button>
            <button id="clicker" type="button">&#10003; Click</button>
          </div>
        </div>
        <script src="/static/field.js"></script><script src="/static/app.js"></script><script src="/static/screens.js"></script></body></html>
        """

    public static let appCSS = """
        * { box-sizing: border-box; }
        [hidden] { display: none !important; }
        html { -webkit-text-size-adjust: 100%; }
        body { margin: 0; font: 18px/1.4 system-ui, sans-serif; color: #111; background: #fafafa; overflow-wrap: anywhere; }
        main { padding: 0 12px 24px; max-width: 960px; margin: 0 auto; }
        main.narrow { max-width: 420px; padding-top: 24px; }
        header { display: flex; justify-content: space-between; align-items: center; padding: 8px 12px; background: #234; color: #fff; }
        h1 { font-size: 1.6em; margin: 12px 0 4px; }
        h2 { font-size: 1.2em; }
        label { display: block; margin: 8px 0; }
        input, textarea, select { font: inherit; width: 100%; max-width: 100%; padding: 8px; }
        input[type=checkbox] { width: auto; }
        label.check { display: flex; gap: 8px; align-items: baseline; }
        fieldset { border: 1px solid #ccd; border-radius: 8px; margin: 12px 0; min-width: 0; }
        fieldset h3 { font-size: 1em; margin: 8px 0 0; }
        button { font: inherit; padding: 10px 16px; border-radius: 8px; border: 1px solid #345; background: #fff; }
        button.small { padding: 4px 10px; font-size: 0.9em; }
        button.big { display: block; width: 100%; font-size: 1.6em; padding: 20px; margin: 12px 0; }
        .go { background: #1b7f3a; color: #fff; border-color: #1b7f3a; }
        .stop, .error-button { background: #b3261e; color: #fff; border-color: #b3261e; }
        .row { display: flex; gap: 12px; flex-wrap: wrap; }
        .row > * { flex: 1 1 140px; }
        .figure { background: #fff; border: 1px solid #ccd; border-radius: 8px; padding: 8px; text-align: center; }
        .figure span { display: block; font-size: 2.2em; font-variant-numeric: tabular-nums; }
        .notlive { background: #b3261e; color: #fff; padding: 8px 12px; margin: 0; }
        .live { background: #1b7f3a; color: #fff; padding: 8px 12px; margin: 0; }
        .result { font-weight: bold; }
        main.stale { opacity: 0.45; }
        .error { color: #b3261e; }
        .layout { font-size: 2em; padding-left: 1.2em; }
        .events { font-size: 0.85em; max-height: 16em; overflow-y: auto; padding-left: 1.2em; }
        code { overflow-wrap: anywhere; }
        """

    static let appJS = """
        'use strict';
        const $ = (id) => document.getElementById(id);
        const F = window.lineupField;
        let me = null, lastFrame = 0, secondsLeft = null, secondsAt = 0, source = null, live = false, last = {};
        // The running session's id, from status; the one whose end view is shown.
        let sessionNow = null, endedSession = null, namedSession = null, sessionName = null;
        const words = {
          'idle': 'No session', 'waiting-for-ready': 'Waiting for ready', 'blocked': 'A station is active: clear it',
          'searching': 'The dog is searching', 'holding': 'The dog is searching (nose at a station)',
          'interval': 'Between trials', 'round-running': 'Round running', 'block-complete': 'Block complete: end the session',
          'repetitions-done': 'Every repetition done: end the session', 'aborted': 'Aborted',
          'interrupted': 'A session was cut short'
        };
        // Where Ready can start something: the station waits for it, or a trial is to be loaded.
        const readyStates = ['waiting-for-ready', 'blocked', 'interval'];
        const readyWhy = {'round-running': 'when the round is over', 'searching': 'when the trial is over', 'holding': 'when the trial is over',
          'repetitions-done': 'every repetition is done', 'block-complete': 'every trial is done', 'aborted': 'the session was aborted', 'idle': 'no session yet',
          'interrupted': 'resume the session first'};
        function say(text, bad, where) { const p = $(where || 'message'); p.textContent = F.plain(text); p.className = bad ? 'error' : ''; }
        // A refusal is said where the action was asked: `where` names that paragraph.
        async function post(path, body, where) {
          let r;
          try {
            r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf},
                                   body: JSON.stringify(body || {})});
          } catch (x) { say('the station\\'s page does not answer: check the Wi-Fi', true, where); return null; }
          const j = await r.json().catch(() => null);
          if (r.status === 401) { location.href = '/login'; return null; }
          if (!r.ok) { say(j && j.error ? j.error.message : ('refused (' + r.status + ')'), true, where); return null; }
          return j;
        }
        function setLive(isLive, why) {
          live = isLive;
          $('live').className = isLive ? 'live' : 'notlive';
          // What is shown while not live is the station as it was: dimmed, its timer stopped.
          document.querySelector('main').classList.toggle('stale', !isLive);
          if (!isLive) { secondsLeft = null; tick(); }
          $('live').textContent = isLive ? 'Live' : ('Not live: ' + F.plain(why || 'reconnecting to the station…'));
          showPad();
        }
        // Who runs sessions (start, end, resume, the clicker) is the role table's rule, sent by /api/me.
        function runs() { return !!me && me.runsSessions === true; }
        // The three buttons: fixed in place, Ready enabled only where it can start something,
        // Click and Error kept in their place (hidden, not removed) where they do not apply.
        function showPad() {
          if (!me) return;
          const s = last;
          $('pad').hidden = !runs();
          document.body.classList.toggle('has-pad', runs());
          const can = live && !!s.session && readyStates.includes(s.state) && !/starts by itself/.test(s.activity || '');
          $('ready').disabled = !can;
          $('ready-why').textContent = can ? '' : (!live ? 'the station is not live' : (readyWhy[s.state] || ''));
          const clicks = !s.mode || s.mode === 'trainer-led';
          for (const id of ['clicker', 'error']) { $(id).classList.toggle('gone', !clicks); $(id).disabled = !clicks || !live; }
        }
        function stepWords(s) { return (s.program ? s.program + ' ' : '') + (s.step || ''); }
        function showStatus(s) {
          last = s;
          $('state').textContent = words[s.state] || s.state;
          $('activity').textContent = F.capital(F.plain(s.activity || ''));
          $('trial').textContent = s.trial ? (s.trial + ' of ' + (s.trials || '?')) : '–';
          $('trial-word').textContent = s.mode === 'trainer-led' ? 'repetition' : 'trial';
          sessionNow = s.session || null;
          if (sessionNow && namedSession !== sessionNow) { namedSession = sessionNow; sessionName = null; nameSession(sessionNow); }
          // The session by its dog, step and start time: never its id.
          $('session').textContent = sessionNow ? (s.dog || '') + ' · ' + stepWords(s) + ' (' + (s.mode || '') + ')'
            + (sessionName && sessionName.session === sessionNow ? ' · started ' + sessionName.clock : '') : '';
          $('setup-button').hidden = !!sessionNow;
          if (sessionNow && sessionNow !== endedSession) $('ended').hidden = true;
          if (!sessionNow) $('trainer-layout').hidden = true;
          showGuess(s); showQueue(); showResume(s);
          secondsLeft = (typeof s.secondsLeft === 'number') ? s.secondsLeft : null; secondsAt = Date.now();
          tick(); showPad();
        }
        // A session cut short (a crash, a kill, a power cut, a restart): what happened and what to
        // do, in the trainer's words, from status alone (it carries nothing of a layout); the
        // trainer resumes it here, or ends it with End the session.
        const cutWords = [[/^a restart/, "the station's program was restarted"],
          [/^a power cut or a reboot/, 'the station lost power or was restarted'],
          [/^a crash or a kill/, "the station's program stopped unexpectedly"],
          [/^/, 'the station stopped unexpectedly (a crash or a power cut)']];
        function showResume(s) {
          const i = s.state === 'interrupted' ? s.interrupted : null;
          $('resume-box').hidden = !i;
          if (!i) return;
          $('activity').textContent = '';
          const what = i.mode === 'trainer-led' ? 'round' : 'trial';
          const how = cutWords.find(([p]) => p.test(i.how || ''))[1];
          const next = (i.cutShort || i.trialsLogged) + 1;
          $('resume-words').textContent = 'The session with ' + i.dog + ' (' + i.step + ') was cut short at ' + i.at + ': '
            + how + '. ' + i.trialsLogged + ' of ' + i.trials + ' ' + what + 's are done and kept'
            + (i.cutShort ? '; ' + what + ' ' + i.cutShort + ' was running then: it is kept as interrupted and never scored' : '') + '.';
          $('resume-todo').textContent = !runs() ? 'The trainer can resume it from this page.'
            : next <= i.trials ? 'Resume it to go on with ' + what + ' ' + next + ' of ' + i.trials + ', with the same samples'
              + (i.mode === 'double-blind' ? ' and the layouts sealed before it started' : '') + '. Or end it: End the session, below.'
            : 'Every ' + what + ' has run: resume it to end it properly, or end it below.';
          $('resume-button').hidden = !runs();
        }
        async function nameSession(id) {
          const r = await fetch('/api/session/name?id=' + encodeURIComponent(id)).catch(() => null);
          if (r && r.ok) { sessionName = await r.json(); if (last.session === id) showStatus(last); }
        }
        // The handler's guess, each trial of a double-blind session: lineupd's `guess`, as
        // lineupctl guess sends it; the stations are the lineup's names, the same every trial.
        let guessStations = '';
        function showGuess(s) {
          const on = !!me && ['handler', 'trainer', 'admin'].includes(me.role) && s.mode === 'double-blind' && !!s.session;
          $('guess-box').hidden = !on;
          if (!on) { guessStations = ''; return; }
          const names = (s.lineupStations || []).join(' ');
          if (names === guessStations) return;
          guessStations = names; const box = $('guess-buttons'); box.textContent = '';
          for (const name of (s.lineupStations || [])) {
            const b = document.createElement('button'); b.type = 'button'; b.textContent = name; b.dataset.guess = name;
            b.setAttribute('aria-label', 'Guess station ' + name);
            b.addEventListener('pointerdown', () => F.felt(b));
            b.onclick = async () => {
              say('Sending your guess: ' + name + '…', false, 'guess-said');
              const j = await post('/api/guess', {station: name}, 'guess-said');
              if (!j) return;
              box.querySelectorAll('button').forEach((x) => x.classList.toggle('chosen', x === b));
              say('Your guess for trial ' + j.trial + ': station ' + j.guess + '. It is kept; the first guess of a trial stands.', false, 'guess-said');
            };
            box.append(b);
          }
        }
        // The sitting's queue (kept by the station's page for every browser): the next dog,
        // started with one press on its next step from its progress.
        function showQueue() {
          if (runs() && !sessionNow) F.refreshQueue().then(drawQueue);
          drawQueue();
        }
        function drawQueue() {
          const next = F.queued()[0]; const on = runs() && !sessionNow && !!next;
          $('queue-next').hidden = !on;
          if (on) {
            $('queue-words').textContent = next.dog + ' · ' + F.nextWords(next) + ' · ' + F.queued().length + ' queued';
            $('queue-start').textContent = 'Start ' + next.dog + "'s session";
          }
        }
        async function startNext() {
          const next = (await F.refreshQueue(true))[0]; if (!next) { drawQueue(); return; }
          say('Starting ' + next.dog + "'s session…", false, 'queue-said');
          const j = await post('/api/queue/start', {id: next.id}, 'queue-said');
          if (!j) return;
          say('', false, 'queue-said');
          say((j.started.message || 'The session started') + (j.started.warning ? ' ' + j.started.warning : ''), !!j.started.warning);
          await F.refreshQueue(true); drawQueue();
        }
        function tick() {
          if (secondsLeft === null) { $('timer').textContent = '–'; return; }
          const left = Math.max(0, secondsLeft - (Date.now() - secondsAt) / 1000);
          $('timer').textContent = left.toFixed(0) + ' s';
        }
        function showEvent(e) {
          const li = document.createElement('li');
          const led = last.mode === 'trainer-led';
          const text = F.eventText(e, led);
          if (e.kind === 'trial' || e.kind === 'revealed') { $('result').textContent = text; li.textContent = text; }
          // The researcher's view: lineupd's own words. A double-blind trial's commitment is the
          // digest a researcher checks later with lineupctl verify-blinding (nothing of the layout).
          else if (text !== null) { li.textContent = text; }
          else if (e.kind === 'committed') { li.textContent = 'trial ' + e.trial + "'s layout committed: SHA-256 " + e.sha256; li.style.overflowWrap = 'anywhere'; }
          else { li.textContent = e.kind + (e.station ? ' at ' + e.station : '') + (e.trial ? ' (trial ' + e.trial + ')' : ''); }
          $('events').prepend(li);
          while ($('events').children.length > 50) $('events').lastChild.remove();
        }
        function showLayout(l) {
          if (me.role === 'assistant') {
            const ol = $('layout'); ol.textContent = '';
            for (const s of (l.stations || [])) {
              const li = document.createElement('li');
              li.textContent = 'Station ' + s.station + ': ' + s.kind + (s.sample ? ' ' + s.sample : '');
              ol.append(li);
            }
            if (l.hidden) { const li = document.createElement('li'); li.textContent = F.plain(l.hidden); ol.append(li); }
            return;
          }
          // The trainer's own layout: where the target goes this round (or the trial to load),
          // large. lineupd answers it in the handler's view only outside a double-blind session.
          const stations = l.stations || [];
          $('trainer-layout').hidden = !stations.length || !runs();
          if (stations.length) {
            const ol = $('trainer-stations'); ol.textContent = '';
            const n = last.trial && last.trials ? ' ' + last.trial + ' of ' + last.trials : '';
            $('trainer-layout-title').textContent = (last.mode === 'trainer-led' ? 'Where the target goes: repetition' : 'What to load: trial') + n;
            for (const s of stations) {
              const li = document.createElement('li'); li.className = s.kind === 'target' ? 'target' : '';
              const name = document.createElement('b'); name.textContent = s.station;
              li.append(name, document.createTextNode(s.kind === 'target' ? 'TARGET' : s.kind), document.createElement('br'),
                document.createTextNode(s.sample || ''));
              li.dataset.station = s.station; li.dataset.kind = s.kind;
              ol.append(li);
            }
          }
          const why = l.hidden && !/no session/.test(l.hidden) && last.session ? F.plain(l.hidden) : '';
          $('hidden-layout').hidden = !why;
          $('hidden-why').textContent = why;
        }
        const outcomeWords = {'hit': 'hit', 'miss': 'miss', 'false-alert': 'false alert', 'correct-rejection': 'correct rejection', 'aborted': 'aborted'};
        function cell(row, text, head) { const c = document.createElement(head ? 'th' : 'td'); c.textContent = String(text); row.append(c); }
        function listInto(id, texts, none) {
          const ul = $(id); ul.textContent = '';
          for (const t of (texts.length ? texts : [none])) { const li = document.createElement('li'); li.textContent = t; ul.append(li); }
        }
        // The session's end, as the study's: its rounds' outcomes and the suggestions, read
        // from the log once lineupd has ended it, and a box for a comment on it.
        async function showEnded(id, tries) {
          endedSession = id; $('ended').hidden = false;
          const r = await fetch('/api/sessions/' + encodeURIComponent(id));
          const d = await r.json().catch(() => null);
          if (r.status === 401) { location.href = '/login'; return; }
          if (!r.ok) { $('ended-summary').textContent = F.plain(d && d.error ? d.error.message : ('the log does not answer (' + r.status + ')')); return; }
          // lineupd writes the end through its log writer: read again shortly until it is there.
          if (!d.endedHow && (tries || 0) < 10) { setTimeout(() => showEnded(id, (tries || 0) + 1), 300); return; }
          const led = d.mode === 'trainer-led'; const n = d.results;
          const started = /[T ](\\d\\d:\\d\\d)/.exec(d.started || '');
          $('ended-summary').textContent = d.dog + ', ' + (d.program || '') + ' ' + (d.phase || '') + '/' + (d.step || '')
            + (d.exercise ? ' exercise ' + d.exercise : '') + ' (' + d.mode + ')' + (started ? ', started ' + started[1] : '') + (d.handler ? ', handler ' + d.handler : '') + '. '
            + n.trials + (led ? ' round(s): ' : ' trial(s): ') + n.hits + ' hit, ' + n.misses + ' miss, ' + n.falseAlerts + ' false alert, '
            + n.correctRejections + ' correct rejection, ' + n.aborted + ' aborted.';
          const t = $('ended-rounds'); t.textContent = '';
          const head = document.createElement('tr'); [led ? 'Round' : 'Trial', 'Outcome', 'Indicated', 'Time to indication'].forEach((h) => cell(head, h, true)); t.append(head);
          for (const x of d.trials) {
            const row = document.createElement('tr'); const at = x.layout.find((l) => l.station === x.indicatedStation);
            cell(row, x.number); cell(row, outcomeWords[x.outcome] || x.outcome);
            cell(row, at ? 'station ' + (at.name || at.station) + ' (' + at.kind + (at.sample ? ' ' + at.sample : '') + ')' : '–');
            cell(row, typeof x.latencyMs === 'number' ? (x.latencyMs / 1000).toFixed(1) + ' s' : '–');
            t.append(row);
          }
          listInto('ended-suggestions', d.improvementSuggestions, 'none');
          listInto('ended-comments', d.comments, 'none yet');
        }
        function connect() {
          if (source) source.close();
          source = new EventSource('/api/events');
          source.addEventListener('status', (m) => { lastFrame = Date.now(); setLive(true); showStatus(JSON.parse(m.data)); });
          source.addEventListener('link', (m) => { lastFrame = Date.now(); const j = JSON.parse(m.data); setLive(false, j.why); });
          source.addEventListener('watch', (m) => { lastFrame = Date.now(); showEvent(JSON.parse(m.data)); });
          source.addEventListener('layout', (m) => { showLayout(JSON.parse(m.data)); });
          source.onerror = async () => {
            setLive(false, 'the station\\'s page does not answer; retrying');
            const r = await fetch('/api/me').catch(() => null);
            if (r && r.status === 401) location.href = '/login';
          };
        }
        setInterval(() => {
          tick();
          if (lastFrame && Date.now() - lastFrame > 3000) setLive(false, 'no news from the station for ' + Math.round((Date.now() - lastFrame) / 1000) + ' s');
          if (source && source.readyState === EventSource.CLOSED) connect();
        }, 500);
        // A press: felt at once (the button and a buzz), said in the reserved line, then the
        // station's answer in the same line. Click and Error go when the thumb lands.
        async function press(button, path, body, sent, done) {
          F.felt(button); say(sent, false, 'pad-said');
          const j = await post(path, body, 'pad-said');
          if (j) say(typeof done === 'function' ? done(j) : done, false, 'pad-said');
        }
        async function main() {
          const r = await fetch('/api/me');
          if (r.status === 401) { location.href = '/login'; return; }
          me = await r.json(); window.lineupRole = me.role;
          $('who').textContent = me.name + ' (' + me.role + ')';
          $('controls').hidden = !runs();
          $('assistant').hidden = me.role !== 'assistant';
          // The handler's page is the live screen alone: nothing else of the log is for it.
          $('nav').hidden = me.role === 'handler';
          $('ready').onclick = () => press($('ready'), '/api/ready', {}, 'Ready pressed…', (j) => j.message || 'The station started');
          $('loaded').onclick = async () => { const j = await post('/api/ready'); if (j) say(j.message); };
          // pointerdown, not click: the press is sent the moment the thumb lands, as a button's edge.
          $('clicker').addEventListener('pointerdown', () => press($('clicker'), '/api/press', {button: 'clicker'}, 'Click sent…', 'Click: the station clicked'));
          $('error').addEventListener('pointerdown', () => press($('error'), '/api/press', {button: 'error'}, 'Error sent…', 'Error: the station has it'));
          $('resume-button').onclick = async () => {
            F.felt($('resume-button')); say('Resuming the session…', false, 'resume-said');
            const j = await post('/api/session/resume', {}, 'resume-said');
            if (j) { say('', false, 'resume-said'); say(j.message || 'The session goes on'); }
          };
          $('abort').onclick = async () => { if (await post('/api/abort')) say('Trial aborted'); };
          $('logout').onclick = async () => { await post('/api/logout'); location.href = '/login'; };
          // One way to start a session: the Set-up screen's form (screens.js).
          const toSetup = () => document.querySelector('#nav button[data-go=setup]').click();
          $('setup-button').onclick = toSetup;
          $('queue-start').onclick = startNext;
          $('ended-setup').onclick = toSetup;
          $('end').addEventListener('submit', async (e) => {
            e.preventDefault();
            const s = $('suggestions').value; const ending = sessionNow;
            if (!await post('/api/session/end', s ? {suggestions: s} : {})) return;
            say('Session ended'); $('suggestions').value = ''; $('end-box').open = false;
            if (ending) { await showEnded(ending); $('ended').scrollIntoView(); }
          });
          $('comment-form').addEventListener('submit', async (e) => {
            e.preventDefault();
            const text = $('comment').value;
            if (!endedSession || !await post('/api/sessions/' + encodeURIComponent(endedSession) + '/note', {text}, 'comment-said')) return;
            $('comment').value = ''; say('Comment added', false, 'comment-said');
            showEnded(endedSession);
          });
          showPad();
          connect();
        }
        main();
        """
}
