// ib web: the page's live feed. One EventSource on /stream; each "log" event is one entry of the bus's
// events stream (its id the stream id), each "board" the dialogs and agents as they are now, "bus" says
// whether the bus answers. A reconnect resumes after the last id seen: the browser sends Last-Event-ID,
// and a new EventSource (after the server refused or went away) asks for ?after= the same id.
(function () {
  "use strict";
  const body = document.body;
  const kept = Number(body.dataset.kept) || 200;
  let last = body.dataset.cursor || "";
  const shownAt = new Map(); // prompt id -> when its dialog first appeared (ms since the epoch)

  function newer(id, than) {
    if (!than) return true;
    const [a, b] = id.split("-").map(BigInt);
    const [c, d] = than.split("-").map(BigInt);
    return a > c || (a === c && b > d);
  }

  function banner(text, up) {
    const bus = document.getElementById("bus");
    bus.textContent = text;
    bus.dataset.up = up ? "yes" : "no";
  }

  function markDialogs() {
    const now = Date.now();
    const open = new Set();
    for (const dialog of document.querySelectorAll(".dialog")) {
      const prompt = dialog.dataset.prompt;
      open.add(prompt);
      if (!shownAt.has(prompt)) {
        shownAt.set(prompt, now);
        notify(dialog);
      }
      dialog.dataset.shownAt = String(shownAt.get(prompt));
    }
    for (const prompt of shownAt.keys()) if (!open.has(prompt)) shownAt.delete(prompt);
  }

  // A notification for each dialog that appears while the page is not looked at (the Notification API,
  // while the page is open); tapping it brings the page up at that dialog.
  function notify(dialog) {
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    if (!document.hidden && document.hasFocus()) return;
    const prompt = dialog.dataset.prompt;
    const question = dialog.querySelector(".question");
    const note = new Notification(dialog.dataset.agent + " waits on you", { body: question ? question.textContent : "", tag: prompt });
    note.onclick = function () {
      window.focus();
      const shown = document.querySelector('.dialog[data-prompt="' + CSS.escape(prompt) + '"]');
      if (shown) shown.scrollIntoView();
      note.close();
    };
    body.dataset.notified = String(Number(body.dataset.notified || 0) + 1);
  }

  function showBoard(html) {
    const board = document.getElementById("board");
    if (!board) return; // an agent's page follows its agent instead (showEvent)
    board.innerHTML = html;
    if (window.htmx) window.htmx.process(board);
    markDialogs();
  }

  // what a page without the event list follows: its agent's events, or the types it names (data-follow)
  function follows(event) {
    if (body.dataset.agent) return event.dataset.agent === body.dataset.agent;
    const prefixes = (body.dataset.follow || "").split(" ").filter(Boolean);
    return prefixes.some(function (prefix) { return (event.dataset.type || "").startsWith(prefix); });
  }

  function showEvent(id, html) {
    if (!newer(id, last)) return; // seen already: never shown twice
    last = id;
    const list = document.getElementById("event-list");
    if (!list) {
      const live = document.getElementById("live");
      const line = document.createElement("template");
      line.innerHTML = html;
      const about = line.content.firstElementChild;
      if (live && window.htmx && about && follows(about)) window.htmx.trigger(live, "refresh");
      return;
    }
    list.insertAdjacentHTML("afterbegin", html);
    while (list.children.length > kept) list.lastElementChild.remove();
  }

  function connect() {
    const query = new URLSearchParams(window.location.search); // the event filter, if any
    if (last) query.set("after", last);
    const asked = query.toString();
    const source = new EventSource("/stream" + (asked ? "?" + asked : ""));
    source.addEventListener("log", function (e) { showEvent(e.lastEventId, e.data); });
    source.addEventListener("board", function (e) { showBoard(e.data); });
    source.addEventListener("bus", function (e) {
      if (e.data === "down") banner("the bus cannot be reached; waiting for it", false);
      else banner("live", true);
    });
    source.onopen = function () { banner("live", true); };
    source.onerror = function () {
      banner("reconnecting to ib web…", false);
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, 1000);
    };
  }

  // An agent's screen is pane text, which nothing pushes: after each read that changed it, read it again a
  // second later, until two reads agree; the agent's next event starts it again.
  let screenSeen = null;
  let screenTimer = 0;
  function followScreen() {
    const live = document.getElementById("live");
    const screen = document.getElementById("screen");
    if (!live || !screen || !window.htmx) return;
    const now = screen.textContent;
    if (now !== screenSeen && !screenTimer) {
      screenTimer = setTimeout(function () { screenTimer = 0; window.htmx.trigger(live, "refresh"); }, 1000);
    }
    screenSeen = now;
  }

  document.body.addEventListener("htmx:afterSwap", function () { markDialogs(); followScreen(); });
  document.addEventListener("click", function () {
    if ("Notification" in window && Notification.permission === "default") Notification.requestPermission();
  }, { once: true });
  markDialogs();
  followScreen();
  connect();
})();
