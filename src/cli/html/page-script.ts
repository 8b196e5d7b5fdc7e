/**
 * The page's script (inline, plain ES2017, no library): the node-name filter, the state checkboxes,
 * and a node's details, drawn on a click from the JSON in #data (a MapNode per row, by data-i) with
 * DOM calls and textContent only, so nothing from the data is ever parsed as HTML. A click on a cell
 * opens its node's details with that device marked; a second click on it, or on the node's name,
 * closes them.
 */
export const PAGE_SCRIPT = `
(function () {
  "use strict";
  var nodes = JSON.parse(document.getElementById("data").textContent);
  var grid = document.getElementById("grid");
  var rows = grid.querySelectorAll(".row[data-i]");
  var query = document.getElementById("q");
  var shown = document.getElementById("shown");

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function filterRows() {
    var text = query.value.trim().toLowerCase();
    var count = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var hit = !text || row.getAttribute("data-name").toLowerCase().indexOf(text) >= 0;
      row.hidden = !hit;
      var next = row.nextElementSibling;
      if (next && next.classList.contains("detail")) next.hidden = !hit;
      if (hit) count++;
    }
    shown.textContent = count + " of " + rows.length + " nodes";
  }
  query.addEventListener("input", filterRows);

  var boxes = document.querySelectorAll("input[data-state]");
  for (var b = 0; b < boxes.length; b++) {
    boxes[b].addEventListener("change", function (event) {
      var box = event.target;
      grid.classList.toggle("hide-" + box.getAttribute("data-state"), !box.checked);
    });
  }

  function bar(b) {
    var line = el("div", "barline");
    line.appendChild(el("span", "name", b.name));
    var big = el("span", "big");
    big.title = b.parts.map(function (p) { return p.text; }).join(", ");
    b.parts.forEach(function (p) {
      var part = el("i", "p-" + p.kind);
      part.style.width = (p.fraction * 100).toFixed(1) + "%";
      big.appendChild(part);
    });
    line.appendChild(big);
    line.appendChild(el("span", "text", b.text));
    return line;
  }

  function devices(node, selected) {
    var table = el("table", "devices");
    var head = table.createTHead().insertRow();
    ["device", "state", "size", "why"].forEach(function (h) { head.appendChild(el("th", "", h)); });
    var body = table.createTBody();
    node.cells.forEach(function (c, j) {
      var tr = body.insertRow();
      if (String(j) === selected) tr.className = "sel";
      tr.appendChild(el("td", "device", c.device));
      tr.appendChild(el("td", "state s-" + c.state, c.state));
      tr.appendChild(el("td", "size", c.size || "-"));
      var why = el("td", "why");
      c.reasons.forEach(function (r) { why.appendChild(el("div", "", r)); });
      tr.appendChild(why);
    });
    return table;
  }

  function steps(node) {
    var list = el("ol", "steps");
    node.steps.forEach(function (s) {
      var li = el("li", s.destructive ? "destructive" : "");
      li.appendChild(el("code", "", s.command));
      if (s.destructive) li.appendChild(el("span", "tag", "DESTRUCTIVE"));
      li.appendChild(el("span", "why", s.reason));
      list.appendChild(li);
    });
    return list;
  }

  function detail(node, selected) {
    var d = el("section", "detail");
    d.appendChild(el("h2", "", node.name + (node.nodeSet ? " (node set " + node.nodeSet + ")" : "") + ": " + node.state));
    if (node.notes.length) {
      var notes = el("ul", "notes");
      node.notes.forEach(function (n) { notes.appendChild(el("li", "", n)); });
      d.appendChild(notes);
    }
    d.appendChild(el("h3", "", "Devices (" + node.cells.length + ")"));
    d.appendChild(node.cells.length ? devices(node, selected) : el("p", "", "none"));
    d.appendChild(el("h3", "", "Volume groups and thin pools"));
    if (!node.bars.length) d.appendChild(el("p", "", "none"));
    node.bars.forEach(function (b) { d.appendChild(bar(b)); });
    d.appendChild(el("h3", "", "Steps (" + node.steps.length + ")"));
    d.appendChild(node.steps.length ? steps(node) : el("p", "", "none"));
    return d;
  }

  function toggle(row, cell) {
    var next = row.nextElementSibling;
    var open = next && next.classList.contains("detail") ? next : null;
    var name = row.querySelector(".nm");
    if (open) open.remove();
    if (open && (cell === null || open.getAttribute("data-c") === cell)) {
      name.setAttribute("aria-expanded", "false");
      return;
    }
    var d = detail(nodes[Number(row.getAttribute("data-i"))], cell);
    if (cell !== null) d.setAttribute("data-c", cell);
    row.after(d);
    name.setAttribute("aria-expanded", "true");
    var sel = d.querySelector("tr.sel");
    if (sel) sel.scrollIntoView({ block: "nearest" });
  }

  grid.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    var row = button && button.closest(".row[data-i]");
    if (row) toggle(row, button.getAttribute("data-c"));
  });
})();
`;
