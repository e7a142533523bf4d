"""The viewer's style sheet and script, served as files (``/static/``) so
that pages carry no inline script and the content security policy can
forbid any."""

from __future__ import annotations

__all__ = ["ASSETS"]

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 1.5rem 3rem;color:#1d2330;background:#fbfbfd}
header{display:flex;gap:1rem;align-items:baseline;padding:.8rem 0;border-bottom:1px solid #dde}
header a{color:#334;text-decoration:none;font-weight:600}
table{border-collapse:collapse;width:100%;margin-top:.8rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e6e6ee;vertical-align:top}
th{font-weight:600;color:#556}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.status{font-weight:600}.answered{color:#17803d}.max_turns{color:#a86b00}
.failed,.cancelled,.error{color:#b3261e}.running{color:#1a5fb4}
.suspended{color:#8a4b00}.waiting{color:#8a4b00;background:#fdf0d5;border-radius:9px;
padding:0 .45rem;font-size:12px;font-weight:600;white-space:nowrap}.ok{color:#17803d}
#pending{border:1px solid #e3c48f;background:#fffaf0;border-radius:6px;padding:.2rem 1rem .6rem;
margin:1rem 0}.pending-call{margin:.8rem 0;padding-top:.5rem;border-top:1px dashed #e3c48f}
.decide{margin-top:.3rem}button.approve{background:#17803d;color:#fff;border:0;padding:.25rem .9rem;
border-radius:4px;cursor:pointer}button.deny{background:#b3261e;color:#fff;border:0;
padding:.25rem .9rem;border-radius:4px;cursor:pointer}.continue{color:#445;font-size:13px}
.scrubber{margin:.3rem 0 .6rem 8.5rem;padding:.3rem .6rem;border:1px solid #d5d9ec;
border-radius:6px;background:#f7f8fc}.scrubber .controls{display:flex;gap:.4rem;align-items:center}
.scrubber input[type=range]{flex:1;max-width:28rem}.scrubber mark{background:#ffe08a}
pre{white-space:pre-wrap;word-break:break-word;background:#f1f2f6;padding:.4rem .6rem;
margin:.2rem 0;border-radius:4px;font:12.5px/1.4 ui-monospace,monospace}
details>summary{cursor:pointer;color:#445}
.turn{border-left:3px solid #c7cbe0;margin:1rem 0;padding:.2rem 0 .2rem 1rem}
.msg{border-radius:8px;margin:.6rem 0;padding:.4rem .8rem;max-width:60rem}
.msg.user,.msg.system{background:#eef3ff}.msg.model{background:#f6f6f2}
.msg .role{display:block;font-size:12px;color:#556}.msg .meta{color:#667;font-size:12px}
.call{border:1px solid #d5d8e6;border-radius:6px;background:#fff;margin:.5rem 0;padding:.3rem .6rem}
.call h4{margin:.2rem 0}.call .label{font-size:12px;color:#667}.approval b{color:#7a4b00}
img.part{max-width:24rem;display:block;margin:.3rem 0}#records>summary{cursor:pointer}
.event{margin:.45rem 0}.event .meta{color:#667;font-size:12px}
.kind{display:inline-block;min-width:8.5rem;font-weight:600}
.diff-add{color:#17803d}.diff-del{color:#b3261e}
form.inline{display:inline}nav.pages{margin-top:1rem}
input,select,button{font:inherit}
mark.invisible{background:#ffd54f;color:#5d2a00;border:1px solid #b36b00;border-radius:3px}
p.hidden-chars{background:#fff3cd;border-left:4px solid #b36b00;padding:.3rem .6rem}
p.cut{color:#8a5300;font-style:italic}
"""

JS = """// toolwire view: local times, a run in progress followed live, and the
// partial arguments' scrubbers.
for (const t of document.querySelectorAll('time[datetime]')) {
  const d = new Date(t.getAttribute('datetime'));
  if (!isNaN(d)) { t.title = t.textContent; t.textContent = d.toLocaleString(); }
}
(function () {
  const page = document.getElementById('run');
  if (!page) return;
  const followed = ['running', 'suspended'];
  if (!followed.includes(page.dataset.status)) return;
  if (page.dataset.follow !== 'yes') return; // an earlier page of turns
  const timeline = document.getElementById('timeline');
  // The run's page is .../runs/<id>: its events are .../runs/<id>/events.
  const url = location.pathname.replace(/[/]+$/, '') + '/events?after=' + page.dataset.last;
  const source = new EventSource(url);
  source.addEventListener('record', (message) => {
    const record = JSON.parse(message.data);
    if (document.getElementById('e' + record.seq)) return;
    let into = timeline;
    if (record.turn !== null) {
      into = timeline.querySelector('section.turn[data-turn="' + record.turn + '"]');
      if (!into || into !== timeline.lastElementChild) {
        into = document.createElement('section');
        into.className = 'turn';
        into.dataset.turn = String(record.turn);
        const title = document.createElement('h3');
        title.textContent = 'turn ' + record.turn;
        into.appendChild(title);
        timeline.appendChild(into);
      }
    }
    into.insertAdjacentHTML('beforeend', record.html);
    page.dataset.last = String(record.seq);
  });
  source.addEventListener('end', (message) => {
    source.close();
    // A run that suspended: the page shows the calls it waits on.
    if (message.data === 'suspended') { location.reload(); return; }
    const status = document.getElementById('status');
    status.textContent = message.data;
    status.className = 'status ' + message.data;
    page.dataset.status = message.data;
  });
})();
"""

JS += """
// A scrubber: the arguments so far at the chosen delta, the delta marked.
// Everything is set as text (textContent), never parsed as HTML.
for (const box of document.querySelectorAll('.scrubber')) {
  const steps = JSON.parse(box.dataset.steps);
  if (!steps.length) continue;
  const whole = steps.map((s) => s[1]).join('');
  const ends = [];
  let at = 0;
  for (const s of steps) { at += s[1].length; ends.push(at); }
  const slider = box.querySelector('input[type=range]');
  const before = box.querySelector('.before');
  const fresh = box.querySelector('mark');
  const pos = box.querySelector('.pos');
  let timer = null;
  const show = (i) => {
    i = Math.max(0, Math.min(steps.length - 1, i));
    slider.value = String(i);
    before.textContent = whole.slice(0, ends[i] - steps[i][1].length);
    fresh.textContent = steps[i][1];
    pos.textContent = (i + 1) + ' / ' + steps.length + ' · +' +
      Math.round(steps[i][0] - steps[0][0]) + ' ms';
    box.dataset.step = String(i);
  };
  slider.addEventListener('input', () => show(Number(slider.value)));
  box.querySelector('.back').addEventListener('click', () => show(Number(slider.value) - 1));
  box.querySelector('.next').addEventListener('click', () => show(Number(slider.value) + 1));
  box.querySelector('.play').addEventListener('click', () => {
    if (timer !== null) { clearInterval(timer); timer = null; return; }
    let i = Number(slider.value) >= steps.length - 1 ? 0 : Number(slider.value);
    show(i);
    timer = setInterval(() => {
      i += 1;
      show(i);
      if (i >= steps.length - 1) { clearInterval(timer); timer = null; }
    }, 60);
  });
  show(steps.length - 1);
}
"""

ASSETS: dict[str, tuple[str, str]] = {
    "view.css": ("text/css; charset=utf-8", CSS),
    "view.js": ("text/javascript; charset=utf-8", JS),
}
"""Each file's media type and text."""
