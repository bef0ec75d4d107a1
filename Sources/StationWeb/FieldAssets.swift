// The page in the field (issue 37): the trainer's words for what lineupd says, the three
// buttons a thumb can trust, the handler's guess, and what makes the page installable (a web app
// manifest, an icon, a service worker and its offline page). Compiled into lineup-web with the
// rest of the page's assets.

enum FieldAssets {
    /// What every view but the researcher's shows instead of lineupd's own words: no command
    /// line, no socket path, no microseconds (the researcher's view keeps them). One list, in
    /// order: specific sentences first, then the general rules that catch the rest.
    static let fieldJS = #"""
        'use strict';
        (() => {
        const rules = [
          // Session start: named by its dog, not its id.
          [/^Session [0-9a-f]{6,} started for /, 'The session started for '],
          [/^Session [0-9a-f]{6,} with /, 'The session with '],
          // A running double-blind session, as the log's refusals name it: by its dog, not its id.
          [/\(session [0-9a-f]{8}, /g, '('],
          // Session start refusals and hints.
          [/, or add it with --new-dog or `lineupctl dogs add [^`]*`/g, ', or choose \u201cA new dog\u2026\u201d and type its name'],
          [/ with --sample LABEL \(lineupctl samples lists them\), or start with --unlabelled to run/g, ' by ticking them under Samples, or tick \u201cWithout samples\u201d to run'],
          [/ \(lineupctl samples\)/g, ' (see Samples)'],
          [/ \(Samples, or lineupctl samples add\)/g, ' (add them on the Samples screen)'],
          [/free some space first \(lineupctl backup, then remove old copies\)/g, 'ask whoever looks after the station to free some space'],
          // Whatever lineupd adds in brackets or backquotes about its commands.
          [/ \((?:or |the ready button or )?`?lineupctl [^)]*\)/g, ''],
          [/`lineupctl ready`/g, 'Ready'],
          [/`?lineupctl [a-z][^`.;,)]*`?/g, 'the station'],
          [/ \(ready = auto\)/g, ''],
          [/ --[a-z][a-z-]*/g, ''],
          // The control socket's words, when lineupd cannot be reached.
          [/^lineupd is not running \((?:no socket at|nobody answers on) [^)]*\)$/, 'the station is not running: check that it is switched on; it starts by itself once powered'],
          [/^lineupd did not answer within ([0-9.]+) s$/, 'the station did not answer within $1 s: it may be busy or starting'],
          [/^lineupd closed the connection without answering$/, 'the station stopped answering: it may be restarting'],
          [/^not allowed to control the station: .*$/, 'this page may not control the station: ask whoever set it up'],
          [/^socket path is too long: .*$/, 'the page is not set up to reach the station: ask whoever set it up'],
          [/lineupd/g, 'the station'],
          // Times for the researcher only; paths never.
          [/ ?[0-9.]+ [\u00b5\u03bc]s/g, ''],
          [/(?:^|\s)\/(?:tmp|var|run|etc|usr|home)\/\S*/g, ' '],
          [/\bready\b/g, 'Ready'],
        ];
        function plain(text) {
          if (text === undefined || text === null) return '';
          if (window.lineupRole === 'researcher') return String(text);
          let t = String(text);
          for (const [pattern, words] of rules) t = t.replace(pattern, words);
          return t.replace(/\s{2,}/g, ' ').trim();
        }
        function capital(t) { return t ? t.charAt(0).toUpperCase() + t.slice(1) : t; }
        // A trial's line (`trial 1/4  A:target B:empty  search: ...  trainer's click at A 69 µs  hit`,
        // the trainer's error presses before the outcome: `... trainer's error at A  miss`)
        // as the trainer says it; the researcher's view shows the line itself.
        function trialText(line, trainerLed) {
          if (window.lineupRole === 'researcher') return line;
          const head = /^\s*trial\s+(\d+)\/(\d+)\s+(.*)$/.exec(line || '');
          if (!head) return capital(plain(line));
          const what = (trainerLed ? 'Round ' : 'Trial ') + head[1] + ' of ' + head[2];
          const rest = head[3];
          if (/^over \(double-blind/.test(rest)) return what + ' is over; its result is shown when the session ends.';
          const outcome = (/(hit|miss|false-alert|correct-rejection|aborted)\s*$/.exec(rest) || [])[1] || '';
          const target = (/(\S+):target\b/.exec(rest) || [])[1];
          const indication = (/indication: (\S+)/.exec(rest) || [])[1];
          const clicks = [...rest.matchAll(/(trainer's click|click) at (no station|\S+)/g)]
            .map((c) => (c[1] === 'click' ? "the station's click at " : 'your click at ') + c[2]);
          // An error press is the trainer's judgement: at the target it makes the round a miss
          // even with a click there, so the outcome says why.
          const errors = [...rest.matchAll(/trainer's error at (no station|\S+)/g)].map((e) => 'your error press at ' + e[1]);
          const parts = [what + ': ' + outcome.replace('-', ' ') + (errors.length ? ' (you pressed error)' : '')];
          if (target) parts.push('target at ' + target);
          parts.push(indication && indication !== 'none' ? 'indication at ' + indication : 'no indication');
          if (clicks.length) parts.push(clicks.join(', '));
          if (errors.length) parts.push(errors.join(', '));
          return parts.join('; ') + '.';
        }
        const kindWords = {edge: 'Nose', sniff: 'Sniff', indication: 'Indication', click: 'Click', button: 'Button pressed',
          cue: 'Sound cue', fault: 'Sensor fault', note: 'Note', feeder: 'Feeder', 'session-start': 'Session started',
          'session-end': 'Session ended'};
        function eventText(e, trainerLed) {
          if (e.kind === 'trial' || e.kind === 'revealed') return trialText(e.line, trainerLed);
          if (window.lineupRole === 'researcher') return null;
          if (e.kind === 'committed') return 'Trial ' + e.trial + "'s layout is sealed (checked against the log after the session)";
          const edge = e.kind === 'edge' ? (e.value === '0' ? 'Nose away' : 'Nose in') : null;
          return (edge || kindWords[e.kind] || capital(e.kind)) + (e.station ? ' at ' + e.station : '') + (e.trial ? ' (trial ' + e.trial + ')' : '');
        }
        // Immediate feedback on a press: the button shows it at once, and the phone buzzes where
        // it can (navigator.vibrate: Android's browsers; Safari has none).
        function felt(button) {
          button.classList.add('pressed');
          setTimeout(() => button.classList.remove('pressed'), 180);
          if (navigator.vibrate) { try { navigator.vibrate(30); } catch (x) { /* not allowed here */ } }
        }
        // The sitting's queue: kept by the station's page (lineup-web) for every browser logged
        // in to it; here only its latest copy, fetched again at most every 3 s while asked for.
        let queueNow = [], queueAt = 0, queueAsking = null;
        function queued() { return queueNow; }
        function refreshQueue(force) {
          if (queueAsking || (!force && Date.now() - queueAt < 3000)) return queueAsking || Promise.resolve(queueNow);
          queueAsking = fetch('/api/queue').then((r) => r.ok ? r.json() : queueNow).catch(() => queueNow)
            .then((list) => { queueNow = Array.isArray(list) ? list : []; queueAt = Date.now(); queueAsking = null; return queueNow; });
          return queueAsking;
        }
        // A queued dog's next step in words: `target-scent/1, exercise 1 (Target and one empty container)`.
        function nextWords(q) {
          if (!q.next) return q.why || '';
          return q.next.step + (q.next.exercise ? ', exercise ' + q.next.exercise : '') + ' (' + q.next.title + ')'
            + (q.next.mostRepetitions ? ', ' + (q.repetitions || q.next.mostRepetitions) + ' round' + ((q.repetitions || q.next.mostRepetitions) === 1 ? '' : 's') : '');
        }
        window.lineupField = {plain, trialText, eventText, felt, capital, queued, refreshQueue, nextWords};
        // Installable: the service worker keeps the offline page (browsers allow it on https and
        // on this machine's own address only).
        if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js').catch(() => {});
        })();
        """#

    static let fieldCSS = """
        /* Every tap target at least 48 x 48 CSS px. */
        button, select, summary, input:not([type=checkbox]) { min-height: 48px; }
        button { min-width: 48px; }
        nav#nav button { min-height: 48px; padding: 6px 12px; }
        button.small { min-height: 48px; }
        label.check { min-height: 48px; align-items: center; }
        input[type=checkbox] { width: 24px; height: 24px; }
        summary { display: flex; align-items: center; cursor: pointer; }
        .table a, #screen p > a { display: inline-block; min-height: 48px; min-width: 48px; padding: 12px 4px; }
        /* The three buttons, fixed at the bottom where the thumb is, in every state: the message
           line above them is reserved, so nothing moves them. */
        #pad { position: fixed; left: 0; right: 0; bottom: 0; z-index: 10; background: #f0f2f5; border-top: 1px solid #ccd;
               padding: 6px 12px calc(8px + env(safe-area-inset-bottom)); max-width: 960px; margin: 0 auto; }
        body.has-pad main { padding-bottom: 260px; }
        /* Whatever is scrolled to (a field, the next control) stays clear of the buttons. */
        html:has(body.has-pad) { scroll-padding-bottom: 260px; }
        #end-box > summary { border: 1px solid #345; border-radius: 8px; padding: 0 16px; background: #fff; margin: 8px 0; }
        body[data-screen]:not([data-screen=live]) #pad { display: none; }
        #pad-said { height: 2.8em; margin: 0 0 6px; overflow: hidden; font-size: 0.95em; line-height: 1.4em; }
        #pad .pad-row { display: flex; gap: 12px; }
        #pad button { margin: 0; color: #fff; font-weight: bold; touch-action: manipulation; user-select: none; -webkit-user-select: none; }
        #pad #ready { display: block; width: 100%; height: 64px; font-size: 1.3em; background: #1d4ed8; border: 3px solid #1d4ed8; border-radius: 4px; margin-bottom: 10px; }
        #pad #ready small { display: block; font-size: 0.6em; font-weight: normal; }
        #pad #ready:disabled { background: #d5d9e0; color: #374151; border: 3px dashed #6b7280; }
        #pad #error { flex: 0 0 38%; height: 96px; font-size: 1.3em; background: #b3261e; border: 3px solid #7f1d1d; border-radius: 4px; }
        #pad #clicker { flex: 1 1 auto; height: 96px; font-size: 1.7em; background: #166534; border: 3px solid #14532d; border-radius: 48px; }
        #pad button.gone { visibility: hidden; }
        /* Felt at once without moving: darker, with a light ring inside (no transform: the box stays). */
        #pad button.pressed, .guesses button.pressed { filter: brightness(0.75); box-shadow: inset 0 0 0 6px rgba(255,255,255,0.8); }
        /* The trainer's own layout, large: which station holds the target this round. */
        #trainer-layout h2 { margin: 8px 0; }
        .stations { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(96px, 1fr)); gap: 8px; }
        .stations li { border: 3px solid #6b7280; border-radius: 8px; padding: 10px 6px; text-align: center; background: #fff; font-size: 1.2em; }
        .stations li b { display: block; font-size: 2em; }
        .stations li.target { border: 6px solid #166534; background: #dcfce7; font-weight: bold; }
        a.button { display: inline-block; min-height: 48px; padding: 12px 16px; border-radius: 8px; background: #234; color: #fff; text-decoration: none; }
        .guesses { display: grid; grid-template-columns: repeat(auto-fit, minmax(64px, 1fr)); gap: 10px; }
        .guesses button { height: 72px; font-size: 1.6em; font-weight: bold; }
        .guesses button.chosen { background: #234; color: #fff; }
        """

    static let manifest = """
        {
          "name": "Lineup station",
          "short_name": "Lineup",
          "description": "The scent lineup station's page: sessions, the clicker, the handler's guess.",
          "start_url": "/",
          "scope": "/",
          "display": "standalone",
          "orientation": "portrait",
          "background_color": "#fafafa",
          "theme_color": "#223344",
          "icons": [
            {"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
            {"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "maskable"}
          ]
        }
        """

    /// Five containers in a row, the one with the target marked: the lineup's own picture.
    static let iconSVG = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512" role="img" aria-label="Lineup station">
        <rect width="512" height="512" rx="96" fill="#223344"/>
        <g fill="#dde3ea"><rect x="56" y="236" width="64" height="120" rx="12"/><rect x="144" y="236" width="64" height="120" rx="12"/>
        <rect x="304" y="236" width="64" height="120" rx="12"/><rect x="392" y="236" width="64" height="120" rx="12"/></g>
        <rect x="224" y="216" width="64" height="140" rx="12" fill="#4ade80"/>
        <circle cx="256" cy="140" r="40" fill="#4ade80"/>
        </svg>
        """

    /// Kept by the service worker at install, shown when the station's page cannot be loaded.
    static let offlineHTML = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="theme-color" content="#223344">
        <title>Lineup station: cannot be reached</title><link rel="stylesheet" href="/static/app.css"><link rel="stylesheet" href="/static/field.css"></head>
        <body><main class="narrow">
        <h1 id="offline">The station cannot be reached</h1>
        <p>This phone cannot reach the lineup station's page just now. Check, in this order:</p>
        <ol>
        <li>The phone is on the station's Wi-Fi (not on mobile data, not on another network).</li>
        <li>The station is switched on and its light is on; after power returns it needs about a minute to start.</li>
        <li>You are near enough to the station for its Wi-Fi.</li>
        </ol>
        <p>Nothing from a session is lost while the page is away: the station keeps running and logging on its own.</p>
        <p><a class="button" href="/">Open the page again</a></p>
        </main></body></html>
        """

    /// Keeps the offline page, its style and the icon; every request goes to the station as it
    /// would without a worker (nothing of a session is ever cached). A page that cannot be
    /// loaded is answered with the offline page, and those kept files with their copies.
    static let serviceWorker = """
        'use strict';
        const kept = 'lineup-offline-1';
        self.addEventListener('install', (e) => {
          e.waitUntil(caches.open(kept).then((c) => c.addAll(['/offline.html', '/static/app.css', '/static/field.css', '/static/icon.svg'])).then(() => self.skipWaiting()));
        });
        self.addEventListener('activate', (e) => {
          e.waitUntil(caches.keys().then((names) => Promise.all(names.filter((n) => n !== kept).map((n) => caches.delete(n))))
            .then(() => self.clients.claim()));
        });
        self.addEventListener('fetch', (e) => {
          if (e.request.mode === 'navigate') {
            e.respondWith(fetch(e.request).catch(() => caches.match('/offline.html', {ignoreSearch: true})));
          } else if (e.request.method === 'GET' && new URL(e.request.url).pathname.startsWith('/static/')) {
            // The offline page's own style and icon, from the kept copies when the station is away.
            e.respondWith(fetch(e.request).catch(() => caches.match(e.request).then((r) => r || Response.error())));
          }
        });
        """
}
