/**
 * The status dashboard's own files: the page, its stylesheet and its script. The script polls
 * `dashboard/data` and draws with uPlot (served from npm by routes/dashboard.ts). It builds the
 * page with `textContent` only: token names and symbols come from contracts, so from anyone.
 * Links are relative, so the page works behind a path prefix too.
 */

export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tokenquery status</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="dashboard/assets/uplot.css">
<link rel="stylesheet" href="dashboard/assets/dashboard.css">
</head>
<body>
<header>
  <h1>tokenquery</h1>
  <span id="live" class="badge">connecting…</span>
  <nav><a href="status">/status</a> <a href="metrics">/metrics</a> <a href="docs">API docs</a></nav>
</header>
<main>
  <section id="chains" class="cards" aria-label="chains"></section>
  <section class="panel">
    <h2>Throughput <small>(last 10 minutes, 10-second averages)</small></h2>
    <div id="chart"></div>
  </section>
  <div class="columns">
    <section class="panel">
      <h2>Top tokens by holders <small>(select one for its top holders)</small></h2>
      <div id="tokens"></div>
    </section>
    <section class="panel">
      <h2>Newest transfers</h2>
      <div id="transfers"></div>
    </section>
  </div>
  <p class="note">Public view: aggregate progress and short summaries with shortened addresses.
  The full data is in the API, which needs a key.</p>
</main>
<script src="dashboard/assets/uplot.js"></script>
<script src="dashboard/assets/dashboard.js"></script>
</body>
</html>
`;

export const DASHBOARD_CSS = `
:root { --fg: #1d2330; --muted: #667085; --line: #e4e7ec; --bg: #f6f7f9; --ok: #12b76a; --bad: #d92d20; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 12px; padding: 12px 20px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 18px; margin: 0; }
header nav { margin-left: auto; display: flex; gap: 14px; }
a { color: #175cd3; text-decoration: none; }
.badge { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: var(--line); color: var(--muted); }
.badge.live { background: #d1fadf; color: #05603a; }
.badge.stale { background: #fee4e2; color: #912018; }
main { padding: 16px 20px; max-width: 1280px; margin: 0 auto; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); gap: 12px; }
.card, .panel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.panel { margin-top: 12px; }
.card h3 { margin: 0 0 6px; font-size: 15px; text-transform: uppercase; letter-spacing: .04em; }
.card dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; margin: 8px 0 0; }
.card dt { color: var(--muted); }
.card dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
.bar { height: 6px; background: var(--line); border-radius: 3px; overflow: hidden; }
.bar > div { height: 100%; background: var(--ok); width: 0; transition: width .4s; }
.error { color: var(--bad); margin-top: 6px; font-size: 12px; overflow-wrap: anywhere; }
h2 { font-size: 15px; margin: 0 0 8px; }
h2 small { color: var(--muted); font-weight: normal; }
h4 { margin: 10px 0 4px; font-size: 13px; text-transform: uppercase; color: var(--muted); }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 12px; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { color: var(--muted); font-weight: 600; font-size: 12px; }
td.num, th.num { text-align: right; }
tr.token { cursor: pointer; }
tr.token:hover td, tr.token.selected td { background: #eff4ff; }
.holders { margin: 6px 0 4px 18px; width: calc(100% - 18px); }
.holders caption { text-align: left; color: var(--muted); font-size: 12px; padding: 2px 0; }
td.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
.empty { color: var(--muted); }
.note { color: var(--muted); font-size: 12px; }
#chart { min-height: 260px; }
`;

/** Plain ES2017 without template literals, so that it can live in this string unescaped. */
export const DASHBOARD_JS = `'use strict';
(function () {
  var POLL_MS = 1500;
  var COLORS = ['#175cd3', '#e04f16', '#12b76a', '#7a5af8', '#c11574'];
  var chart = null;
  var chartChains = '';
  /** The token whose holders are shown, per chain (its shortened id); the first token by default. */
  var selected = {};
  var lastData = null;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return node;
  }
  function fmt(n, digits) {
    if (n === null || n === undefined) return '–';
    return Number(n).toLocaleString('en-US', { maximumFractionDigits: digits || 0 });
  }
  function ago(ms) {
    if (!ms) return 'never';
    var s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    return s < 60 ? s + ' s ago' : Math.round(s / 60) + ' min ago';
  }
  function setText(node, text) { if (node.textContent !== text) node.textContent = text; }

  function renderChains(chains) {
    var root = document.getElementById('chains');
    chains.forEach(function (c) {
      var card = root.querySelector('[data-chain="' + c.chain + '"]');
      if (!card) {
        var dl = el('dl');
        [['indexed', 'Indexed block'], ['head', 'Node head'], ['lag', 'Lag (blocks)'],
         ['blocksPerSecond', 'Blocks/s'], ['transfersPerSecond', 'Transfers/s'],
         ['transfers', 'Transfers indexed'], ['updated', 'Updated']].forEach(function (f) {
          dl.appendChild(el('dt', null, [f[1]]));
          dl.appendChild(el('dd', { 'data-field': f[0] }));
        });
        card = el('article', { 'class': 'card', 'data-chain': c.chain }, [
          el('h3', null, [c.chain]), el('div', { 'class': 'bar' }, [el('div')]), dl,
          el('div', { 'class': 'error', 'data-field': 'error' })]);
        root.appendChild(card);
      }
      var field = function (name) { return card.querySelector('[data-field="' + name + '"]'); };
      setText(field('indexed'), fmt(c.indexed));
      setText(field('head'), fmt(c.head));
      setText(field('lag'), fmt(c.lag));
      setText(field('blocksPerSecond'), fmt(c.blocksPerSecond, 1));
      setText(field('transfersPerSecond'), fmt(c.transfersPerSecond, 1));
      setText(field('transfers'), fmt(c.transfers));
      setText(field('updated'), ago(c.updatedAt));
      setText(field('error'), c.lastError ? 'Error: ' + c.lastError : '');
      var share = c.head > 0 ? Math.min(100, (100 * c.indexed) / c.head) : 0;
      card.querySelector('.bar > div').style.width = share.toFixed(2) + '%';
    });
  }

  function renderChart(data) {
    var chains = Object.keys(data.throughput.chains);
    var times = data.throughput.times;
    var columns = [times];
    chains.forEach(function (c) {
      columns.push(data.throughput.chains[c].blocksPerSecond);
      columns.push(data.throughput.chains[c].transfersPerSecond);
    });
    var node = document.getElementById('chart');
    if (chart === null || chartChains !== chains.join()) {
      if (chart) chart.destroy();
      chartChains = chains.join();
      var series = [{}];
      chains.forEach(function (c, i) {
        var color = COLORS[i % COLORS.length];
        series.push({ label: c + ' blocks/s', stroke: color, width: 2, scale: 'blocks' });
        series.push({ label: c + ' transfers/s', stroke: color, width: 1, dash: [6, 4], scale: 'transfers' });
      });
      chart = new uPlot({
        width: Math.max(320, node.clientWidth),
        height: 240,
        legend: { live: false },
        series: series,
        scales: { x: { time: true }, blocks: { range: function (u, min, max) { return [0, Math.max(1, max)]; } },
                  transfers: { range: function (u, min, max) { return [0, Math.max(1, max)]; } } },
        axes: [{}, { scale: 'blocks', label: 'blocks/s' },
               { scale: 'transfers', side: 1, label: 'transfers/s', grid: { show: false } }],
      }, columns, node);
    } else {
      chart.setData(columns);
    }
  }

  function table(headers, rows) {
    var head = el('tr', null, headers.map(function (h) {
      return el('th', h[1] ? { 'class': h[1] } : null, [h[0]]);
    }));
    var body = rows.map(function (cells) {
      return el('tr', null, cells.map(function (cell, i) {
        return el('td', headers[i][1] ? { 'class': headers[i][1] } : null, [cell]);
      }));
    });
    return el('table', null, [el('thead', null, [head]), el('tbody', null, body)]);
  }

  function renderLists(data) {
    lastData = data;
    var tokens = document.getElementById('tokens');
    var transfers = document.getElementById('transfers');
    var tokenBlocks = [];
    var transferBlocks = [];
    Object.keys(data.topTokens).forEach(function (chain) {
      var list = data.topTokens[chain];
      tokenBlocks.push(el('h4', null, [chain]));
      if (list.length === 0) {
        tokenBlocks.push(el('p', { 'class': 'empty' }, ['No tokens yet.']));
        return;
      }
      var shown = list.filter(function (t) { return t.token === selected[chain]; })[0] || list[0];
      var tokenTable = table([['#'], ['Token'], ['Contract', 'id'], ['Holders', 'num'], ['Transfers', 'num']],
        list.map(function (t, i) {
          return [String(i + 1), t.symbol || t.name || '?', t.token, fmt(t.holders), fmt(t.transfers)];
        }));
      Array.prototype.forEach.call(tokenTable.querySelectorAll('tbody tr'), function (row, i) {
        var token = list[i];
        row.className = 'token' + (token === shown ? ' selected' : '');
        row.addEventListener('click', function () {
          selected[chain] = token.token;
          renderLists(lastData);
        });
      });
      tokenBlocks.push(tokenTable);
      var holders = table([['Rank', 'num'], ['Holder', 'id'], ['Amount', 'num'], ['% of supply', 'num']],
        shown.topHolders.map(function (h, i) {
          return [String(i + 1), h.address, h.amount, h.percentage === null ? '–' : h.percentage + ' %'];
        }));
      holders.className = 'holders';
      holders.insertBefore(el('caption', null,
        ['Top holders of ' + (shown.symbol || shown.name || shown.token)]), holders.firstChild);
      tokenBlocks.push(shown.topHolders.length === 0 ? el('p', { 'class': 'empty holders' }, ['No holders.']) : holders);
    });
    Object.keys(data.recentTransfers).forEach(function (chain) {
      var list = data.recentTransfers[chain];
      transferBlocks.push(el('h4', null, [chain]));
      transferBlocks.push(list.length === 0 ? el('p', { 'class': 'empty' }, ['No transfers yet.']) :
        table([['Block', 'num'], ['Token'], ['Amount', 'num'], ['From', 'id'], ['To', 'id'], ['Tx', 'id']],
          list.map(function (t) {
            return [fmt(t.block), t.symbol || t.token, t.amount, t.from || '(mint)', t.to || '(burn)', t.tx];
          })));
    });
    tokens.replaceChildren.apply(tokens, tokenBlocks);
    transfers.replaceChildren.apply(transfers, transferBlocks);
  }

  function setLive(ok, text) {
    var badge = document.getElementById('live');
    badge.className = 'badge ' + (ok ? 'live' : 'stale');
    setText(badge, text);
  }

  function poll() {
    fetch('dashboard/data', { cache: 'no-store', headers: { accept: 'application/json' } })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(function (data) {
        renderChains(data.chains);
        renderChart(data);
        renderLists(data);
        setLive(true, 'live · ' + new Date(data.generatedAt).toLocaleTimeString());
      })
      .catch(function (error) { setLive(false, 'no answer (' + error.message + '), retrying'); })
      .then(function () { setTimeout(poll, POLL_MS); });
  }

  window.addEventListener('resize', function () {
    var node = document.getElementById('chart');
    if (chart) chart.setSize({ width: Math.max(320, node.clientWidth), height: 240 });
  });
  poll();
})();
`;
