// The lab page's own assets, compiled in as the station page's are (its login script and its
// style sheet are the station page's, served from StationWeb). No inline script: the CSP
// forbids it.

enum LabAssets {
    static let loginHTML = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Lineup lab: log in</title><link rel="stylesheet" href="/static/app.css"></head>
        <body><main class="narrow">
        <h1>Lineup lab</h1>
        <form id="login">
        <label>Name <input id="name" name="name" autocomplete="username" required></label>
        <label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
        <button type="submit" id="login-button">Log in</button>
        <p id="login-error" class="error" role="alert"></p>
        </form>
        <p class="hint">No account yet? It is made on the lab's server: <code>lineupctl web user add NAME --role researcher --users /var/lib/lineup-lab/users.db</code>.</p>
        </main><script src="/static/login.js"></script></body></html>
        """

    static let pageHTML = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Lineup lab: stations</title>
        <link rel="stylesheet" href="/static/app.css"><link rel="stylesheet" href="/static/lab.css"></head>
        <body>
        <header><span>Lineup lab</span><span><span id="who"></span> <button class="small" id="logout">Log out</button></span></header>
        <main>
        <h1>Stations</h1>
        <p id="rule" class="hint"></p>
        <p id="problem" class="error" role="alert"></p>
        <div id="stations"></div>
        <p class="hint">Refreshed every 5 s; last at <span id="refreshed">never</span>.</p>
        </main>
        <script src="/static/lab.js"></script></body></html>
        """

    static let pageCSS = """
        .station { background: #fff; border: 1px solid #ccd; border-radius: 8px; padding: 8px 12px; margin: 12px 0; }
        .station h2 { margin: 4px 0; display: flex; justify-content: space-between; gap: 8px; flex-wrap: wrap; }
        .station dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 4px 0; }
        .station dt { color: #555; }
        .station dd { margin: 0; }
        .badge { font-size: 0.75em; padding: 2px 8px; border-radius: 12px; color: #fff; background: #1b7f3a; }
        .badge.silent { background: #b3261e; }
        .station.silent { border-color: #b3261e; }
        .hint { color: #555; font-size: 0.9em; }
        """

    static let pageJS = """
        'use strict';
        let csrf = '';
        function ago(s) {
          if (s < 90) return Math.round(s) + ' s ago';
          if (s < 5400) return Math.round(s / 60) + ' min ago';
          if (s < 172800) return Math.round(s / 3600) + ' h ago';
          return Math.round(s / 86400) + ' days ago';
        }
        function item(dl, term, value) {
          const dt = document.createElement('dt'); dt.textContent = term;
          const dd = document.createElement('dd'); dd.textContent = value;
          dl.append(dt, dd);
        }
        function card(s) {
          const div = document.createElement('div');
          div.className = 'station' + (s.reachable ? '' : ' silent');
          div.dataset.station = s.id;
          const h = document.createElement('h2');
          const name = document.createElement('span'); name.textContent = s.name || s.id;
          const badge = document.createElement('span');
          badge.className = 'badge' + (s.reachable ? '' : ' silent');
          badge.textContent = s.reachable ? 'reachable' : (s.lastSeen ? 'last seen ' + ago(s.secondsSinceSeen) : 'never seen');
          h.append(name, badge);
          div.append(h);
          const dl = document.createElement('dl');
          if (s.lastSeen) item(dl, 'Last heartbeat', s.lastSeen);
          if (s.lineupdReachable === false) item(dl, 'lineupd', 'not answering: ' + (s.lineupdProblem || ''));
          if (s.session) {
            let what = s.session + ' (' + (s.mode || '') + ')';
            if (s.dog) what += ', ' + s.dog;
            item(dl, 'Session', what);
            let st = s.state || '';
            if (s.trial && s.trials) st += ', trial ' + s.trial + ' of ' + s.trials;
            item(dl, 'State', st);
          } else if (s.lineupdReachable) {
            item(dl, 'Session', 'none (' + (s.state || 'idle') + ')');
          }
          // A station never seen has told nothing: no faults to say, not "none".
          if (s.lastSeen) item(dl, 'Faults', s.faults.length ? s.faults.join('; ') : 'none');
          if (s.freeMegabytes != null) item(dl, 'Free space', s.freeMegabytes + ' MB');
          if (s.behindRows != null) {
            item(dl, 'Sync behind', s.behindRows + ' rows' + (s.oldestUnsynced ? ', oldest unsynced ' + s.oldestUnsynced : ''));
          } else if (s.name) {
            item(dl, 'Sync behind', 'unknown (the store did not answer the sync)');
          }
          if (s.syncError) item(dl, 'Sync error', s.syncError);
          div.append(dl);
          return div;
        }
        async function refresh() {
          const problem = document.getElementById('problem');
          try {
            const r = await fetch('/api/stations', {cache: 'no-store'});
            if (r.status === 401) { location.href = '/login'; return; }
            const j = await r.json();
            if (!r.ok) { problem.textContent = j.error ? j.error.message : ('error ' + r.status); return; }
            problem.textContent = '';
            document.getElementById('rule').textContent = j.rule;
            const list = document.getElementById('stations');
            list.replaceChildren(...j.stations.map(card));
            if (!j.stations.length) list.textContent = 'No station has synced into the store yet.';
            document.getElementById('refreshed').textContent = j.now;
          } catch (x) { problem.textContent = 'the lab page does not answer: ' + x; }
        }
        async function me() {
          const r = await fetch('/api/me', {cache: 'no-store'});
          if (r.status === 401) { location.href = '/login'; return; }
          const j = await r.json();
          csrf = j.csrf;
          document.getElementById('who').textContent = j.name + ' (' + j.role + ')';
        }
        document.getElementById('logout').addEventListener('click', async () => {
          await fetch('/api/logout', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf}, body: '{}'});
          location.href = '/login';
        });
        me().then(refresh);
        setInterval(refresh, 5000);
        """
}
