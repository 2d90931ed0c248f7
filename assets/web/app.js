// The page: draws the board as SVG from the server's game state and sends moves to the JSON API
// (see src/serve/api.rs). The server checks every move; the page only offers what it was told
// is legal. Plain JavaScript, no build step.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CELL = 52;
const MARGIN = 26;
const MOVE_MS = 380;
const GAME_KEY = "epaminondas-game"; // per tab: sessionStorage keeps each tab's own game

let state = null;     // the last game state the server sent
let selected = null;  // the tail square picked, while choosing a destination
let busy = false;     // a request is under way: clicks wait

const $ = (id) => document.getElementById(id);

function el(name, attributes = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data;
  try {
    data = await response.json();
  } catch {
    data = { error: `the server answered ${response.status} without JSON` };
  }
  if (!response.ok) {
    const error = new Error(data.error || `the server answered ${response.status}`);
    error.status = response.status;
    error.code = data.code;
    throw error;
  }
  return data;
}

// Squares are named like the server names them (a1 .. n12); the board turns round for Black.
function column(name) { return name.charCodeAt(0) - 97; }
function row(name) { return parseInt(name.slice(1), 10) - 1; }
function flipped() { return state && state.human === "black"; }
function centre(name) {
  const c = flipped() ? state.width - 1 - column(name) : column(name);
  const r = flipped() ? row(name) : state.height - 1 - row(name);
  return [MARGIN + c * CELL + CELL / 2, MARGIN + r * CELL + CELL / 2];
}
function squareName(c, r) { return String.fromCharCode(97 + c) + (r + 1); }
function pieceAt(name) {
  const text = state.board[state.height - 1 - row(name)];
  return text[column(name)];
}

function setBusy(value) {
  busy = value;
  document.body.dataset.busy = String(value);
  updateControls();
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

function drawBoard(animate) {
  const svg = $("board");
  const w = state.width * CELL + 2 * MARGIN;
  const h = state.height * CELL + 2 * MARGIN;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.replaceChildren();
  const defs = el("defs", {}, svg);
  for (const [id, inner, outer] of [["white-piece", "#ffffff", "#d9d0bf"], ["black-piece", "#5a524b", "#1c1916"]]) {
    const gradient = el("radialGradient", { id, cx: "35%", cy: "30%", r: "75%" }, defs);
    el("stop", { offset: "0%", "stop-color": inner }, gradient);
    el("stop", { offset: "100%", "stop-color": outer }, gradient);
  }
  el("rect", { x: 0, y: 0, width: w, height: h, rx: 10, fill: "#8a6a45" }, svg);

  const squares = el("g", {}, svg);
  const marks = el("g", {}, svg);
  const pieces = el("g", {}, svg);
  // Above the pieces: a destination may be a square the phalanx itself now covers.
  const hints = el("g", {}, svg);
  const preview = el("g", {}, svg);

  const moves = state.legal_moves || {};
  const targets = selected ? (moves[selected] || []) : [];
  for (let c = 0; c < state.width; c++) {
    for (let r = 0; r < state.height; r++) {
      const name = squareName(c, r);
      const [x, y] = centre(name);
      const classes = ["square"];
      if (moves[name]) classes.push("own");
      if (targets.some((m) => m.to === name)) classes.push("target");
      const rect = el("rect", {
        x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL,
        fill: (c + r) % 2 === 0 ? "var(--dark-square)" : "var(--light-square)",
        class: classes.join(" "), "data-square": name,
      }, squares);
      rect.addEventListener("click", () => clickSquare(name));
      rect.addEventListener("mouseenter", () => hoverSquare(name, preview));
      rect.addEventListener("mouseleave", () => preview.replaceChildren());
      // The two goal rows, faintly: reaching the far row is how the game is won.
      if (r === 0 || r === state.height - 1) {
        el("rect", { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, fill: "var(--goal-tint)", class: "mark" }, squares);
      }
    }
  }
  for (let c = 0; c < state.width; c++) {
    const name = squareName(c, 0);
    const [x] = centre(name);
    el("text", { x, y: h - 8, "text-anchor": "middle", class: "label" }, svg).textContent = name[0];
    el("text", { x, y: 18, "text-anchor": "middle", class: "label" }, svg).textContent = name[0];
  }
  for (let r = 0; r < state.height; r++) {
    const [, y] = centre(squareName(0, r));
    el("text", { x: 13, y: y + 4, "text-anchor": "middle", class: "label" }, svg).textContent = r + 1;
    el("text", { x: w - 13, y: y + 4, "text-anchor": "middle", class: "label" }, svg).textContent = r + 1;
  }

  // The last move: where the phalanx came from and went, and what it captured.
  const last = state.last_move;
  if (last) {
    for (const [from, to] of last.path) {
      for (const [name, opacity] of [[from, 0.28], [to, 0.5]]) {
        const [x, y] = centre(name);
        el("rect", { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL, fill: `rgba(230, 190, 40, ${opacity})`, class: "mark last-move", "data-square": name }, marks);
      }
    }
    for (const name of last.captured) {
      const [x, y] = centre(name);
      const d = CELL * 0.22;
      el("path", { d: `M${x - d} ${y - d}L${x + d} ${y + d}M${x + d} ${y - d}L${x - d} ${y + d}`, stroke: "var(--danger)", "stroke-width": 4, "stroke-linecap": "round", class: "mark captured", "data-square": name }, marks);
    }
  }

  // Pieces where the state has them; a move being animated starts its phalanx at the origin.
  const moving = new Map();
  if (animate && last) for (const [from, to] of last.path) moving.set(to, from);
  const animations = [];
  for (let c = 0; c < state.width; c++) {
    for (let r = 0; r < state.height; r++) {
      const name = squareName(c, r);
      const piece = pieceAt(name);
      if (piece === ".") continue;
      if (piece === "s") { drawStone(pieces, name); continue; }
      const start = moving.get(name) || name;
      const circle = drawPiece(pieces, start, piece, name);
      if (start !== name) animations.push({ circle, from: centre(start), to: centre(name) });
      if (name === selected) circle.setAttribute("stroke", "var(--accent)"), circle.setAttribute("stroke-width", 4);
    }
  }
  const fading = [];
  if (animate && last) {
    const victim = last.by === "white" ? "b" : "w";
    for (const name of last.captured) fading.push(drawPiece(pieces, name, victim, null));
  }

  for (const m of targets) {
    const [x, y] = centre(m.to);
    if (m.captures.length) {
      el("circle", { cx: x, cy: y, r: CELL * 0.36, fill: "none", stroke: "var(--danger)", "stroke-width": 4, class: "hint", "data-target": m.to }, hints);
    } else {
      el("circle", { cx: x, cy: y, r: CELL * 0.14, fill: "var(--accent)", opacity: 0.75, class: "hint", "data-target": m.to }, hints);
    }
  }
  return animations.length || fading.length ? play(animations, fading) : Promise.resolve();
}

// A stone of the stones variant: a grey diamond that never moves.
function drawStone(layer, name) {
  const [x, y] = centre(name);
  const d = CELL * 0.36;
  el("polygon", {
    points: `${x},${y - d} ${x + d},${y} ${x},${y + d} ${x - d},${y}`,
    fill: "#8a8d91", stroke: "#4a4c4f", "stroke-width": 1.5, class: "stone", "data-square": name,
  }, layer);
}

function drawPiece(layer, at, piece, name) {
  const [x, y] = centre(at);
  const circle = el("circle", {
    cx: x, cy: y, r: CELL * 0.38,
    fill: piece === "w" ? "url(#white-piece)" : "url(#black-piece)",
    stroke: piece === "w" ? "#8c7f6a" : "#0d0b0a", "stroke-width": 1.5,
    class: "piece", "data-color": piece === "w" ? "white" : "black",
  }, layer);
  if (name) circle.setAttribute("data-square", name);
  return circle;
}

// Slides the moving pieces and fades the captured ones. Resolves on a timer as well, because
// a hidden tab gets no animation frames and must not stall the game.
function play(animations, fading) {
  return new Promise((resolve) => {
    const started = performance.now();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      for (const a of animations) a.circle.setAttribute("cx", a.to[0]), a.circle.setAttribute("cy", a.to[1]);
      for (const f of fading) f.remove();
      resolve();
    };
    const frame = (now) => {
      if (done) return;
      const k = Math.min(1, (now - started) / MOVE_MS);
      const eased = k < 0.5 ? 2 * k * k : 1 - Math.pow(-2 * k + 2, 2) / 2;
      for (const a of animations) {
        a.circle.setAttribute("cx", a.from[0] + (a.to[0] - a.from[0]) * eased);
        a.circle.setAttribute("cy", a.from[1] + (a.to[1] - a.from[1]) * eased);
      }
      for (const f of fading) f.setAttribute("opacity", String(Math.max(0, 1 - Math.max(0, k - 0.5) * 2)));
      if (k < 1) requestAnimationFrame(frame); else finish();
    };
    requestAnimationFrame(frame);
    setTimeout(finish, MOVE_MS + 150);
  });
}

// Hovering a destination shows which pieces would move and which would be taken.
function hoverSquare(name, layer) {
  layer.replaceChildren();
  if (!selected || !state.legal_moves[selected]) return;
  const move = state.legal_moves[selected].find((m) => m.to === name);
  if (!move) return;
  for (const square of move.moving) {
    const [x, y] = centre(square);
    el("circle", { cx: x, cy: y, r: CELL * 0.42, fill: "none", stroke: "var(--accent)", "stroke-width": 3, class: "mark" }, layer);
  }
  for (const square of move.captures) {
    const [x, y] = centre(square);
    el("circle", { cx: x, cy: y, r: CELL * 0.42, fill: "rgba(178, 58, 43, 0.25)", stroke: "var(--danger)", "stroke-width": 3, class: "mark" }, layer);
  }
}

function clickSquare(name) {
  if (busy || !state || state.turn !== "human") return;
  const moves = state.legal_moves;
  // Placing a stone (the stones variant) takes one click on the empty square.
  const placement = (moves[name] || []).find((m) => m.move.startsWith("@"));
  if (placement) return playMove(placement.move);
  if (selected) {
    const move = (moves[selected] || []).find((m) => m.to === name);
    if (move) return playMove(move.move);
  }
  selected = moves[name] && name !== selected ? name : null;
  drawBoard(false);
}

function describeStrength(strength) {
  if (strength.sims) return `${strength.sims} simulations per move`;
  if (strength.time) return `${strength.time} s per move`;
  return "the server's default strength";
}

function render(animate) {
  document.body.dataset.game = state.id;
  document.body.dataset.ply = String(state.ply);
  document.body.dataset.turn = state.turn || "over";
  $("opponent").textContent = `You (${state.human}) against ${state.agent}, ${describeStrength(state.strength)}`;
  const status = $("status");
  status.textContent = state.message.charAt(0).toUpperCase() + state.message.slice(1);
  status.classList.remove("thinking");

  const p = state.win_probability;
  $("winprob-text").textContent = p === null || p === undefined ? "–" : `${Math.round(p * 100)}%`;
  $("winprob-fill").style.width = `${p === null || p === undefined ? 0 : Math.round(p * 100)}%`;
  $("counts").textContent = `Pieces: white ${state.pieces.white}, black ${state.pieces.black} · on the far row: white ${state.far_row.white}, black ${state.far_row.black}`;

  const list = $("moves");
  list.replaceChildren();
  for (let i = 0; i < state.moves.length; i += 2) {
    const item = document.createElement("li");
    for (const j of [i, i + 1]) {
      if (j >= state.moves.length) break;
      const span = document.createElement("span");
      span.textContent = state.moves[j];
      if (j === state.moves.length - 1) span.className = "last";
      item.appendChild(span);
    }
    list.appendChild(item);
  }
  list.scrollTop = list.scrollHeight;

  const banner = $("banner");
  if (state.result !== "*") {
    const headline = state.winner === null ? "Draw" : state.winner === state.human ? "You win!" : "The agent wins";
    banner.innerHTML = "";
    banner.append(headline);
    const detail = document.createElement("small");
    detail.textContent = `${state.result} · ${state.message}`;
    banner.appendChild(detail);
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }
  updateControls();
  return drawBoard(animate);
}

function updateControls() {
  const live = state && state.result === "*";
  $("undo").disabled = busy || !state || !state.can_undo;
  $("resign").disabled = busy || !live;
  $("new-game").disabled = busy;
  $("move-input").disabled = busy || !state || state.turn !== "human";
}

async function agentMove() {
  const status = $("status");
  status.textContent = "The agent is thinking…";
  status.classList.add("thinking");
  try {
    const reply = await api("POST", `/api/games/${state.id}/agent-move`);
    state = reply.state;
  } catch (error) {
    showError(error.message);
    // A lost race (undo in another tab) or an unknown game: show what the server has.
    if (error.status === 409) state = await api("GET", `/api/games/${state.id}`);
  }
  await render(true);
}

async function playMove(text) {
  setBusy(true);
  showError("");
  try {
    state = await api("POST", `/api/games/${state.id}/move`, { move: text });
    selected = null;
    await render(true);
    if (state.turn === "agent") await agentMove();
  } catch (error) {
    showError(error.message);
  } finally {
    setBusy(false);
  }
}

function strengthRequest() {
  const [kind, value] = $("strength").value.split(":");
  return kind === "default" ? {} : { [kind]: Number(value) };
}

async function newGame() {
  setBusy(true);
  showError("");
  selected = null;
  try {
    state = await api("POST", "/api/games", { colour: $("colour").value, ...strengthRequest() });
    sessionStorage.setItem(GAME_KEY, state.id);
    await render(false);
    if (state.turn === "agent") await agentMove();
  } catch (error) {
    showError(error.message);
  } finally {
    setBusy(false);
  }
}

async function undo() {
  setBusy(true);
  showError("");
  selected = null;
  try {
    state = await api("POST", `/api/games/${state.id}/undo`);
    await render(false);
  } catch (error) {
    showError(error.message);
  } finally {
    setBusy(false);
  }
}

async function resign() {
  setBusy(true);
  try {
    state = await api("POST", `/api/games/${state.id}/resign`);
    selected = null;
    await render(false);
  } catch (error) {
    showError(error.message);
  } finally {
    setBusy(false);
  }
}

// Shows the game's own colour and strength in the selectors after a reload.
function syncSelectors() {
  $("colour").value = state.human;
  const s = state.strength;
  const value = s.sims ? `sims:${s.sims}` : s.time ? `time:${s.time}` : "default";
  if ([...$("strength").options].some((o) => o.value === value)) $("strength").value = value;
}

async function start() {
  $("new-game").addEventListener("click", newGame);
  $("undo").addEventListener("click", undo);
  $("resign").addEventListener("click", resign);
  $("move-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("move-input").value.trim();
    if (text && !busy) {
      $("move-input").value = "";
      playMove(text);
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && selected) {
      selected = null;
      drawBoard(false);
    }
  });
  // A reload keeps the tab's game; a new tab, or a server restart, starts a new one.
  const id = sessionStorage.getItem(GAME_KEY);
  if (id) {
    try {
      state = await api("GET", `/api/games/${id}`);
      syncSelectors();
      setBusy(true);
      await render(false);
      if (state.turn === "agent") await agentMove();
      setBusy(false);
      return;
    } catch (error) {
      sessionStorage.removeItem(GAME_KEY);
    }
  }
  await newGame();
}

start();
