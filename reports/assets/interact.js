// What a report does beyond a static page: a story step clicked (or named by
// the address's #fragment) is highlighted on its section's timelines; the
// timelines zoom and pan; n / p jump between causes. The page reads fully
// without it. No network, no storage.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";

  function closestSection(node) {
    while (node && !(node.classList && node.classList.contains("algorithm"))) node = node.parentNode;
    return node;
  }

  // Marks time `t` (ns) on lane `lane` of every timeline of the step's section.
  function highlight(step) {
    var section = closestSection(step);
    if (!section) return;
    var old = section.querySelectorAll(".step-highlight");
    for (var i = 0; i < old.length; i++) old[i].parentNode.removeChild(old[i]);
    var current = section.querySelectorAll(".step.current");
    for (i = 0; i < current.length; i++) current[i].classList.remove("current");
    step.classList.add("current");
    var t = Number(step.getAttribute("data-t"));
    var lane = step.getAttribute("data-lane") || "";
    var svgs = section.querySelectorAll("svg.timeline[data-from]");
    for (i = 0; i < svgs.length; i++) {
      var svg = svgs[i];
      var from = Number(svg.getAttribute("data-from")), to = Number(svg.getAttribute("data-to"));
      if (!(t >= from && t <= to)) continue;
      var x0 = Number(svg.getAttribute("data-x0")), w = Number(svg.getAttribute("data-w"));
      var top = Number(svg.getAttribute("data-top")), laneH = Number(svg.getAttribute("data-lane-h"));
      var lanes = (svg.getAttribute("data-lanes") || "").split(" ");
      var x = x0 + w * (t - from) / Math.max(to - from, 1);
      var g = document.createElementNS(SVG, "g");
      g.setAttribute("class", "step-highlight");
      var line = document.createElementNS(SVG, "line");
      line.setAttribute("x1", x); line.setAttribute("x2", x);
      line.setAttribute("y1", top - 6); line.setAttribute("y2", top + laneH * lanes.length);
      g.appendChild(line);
      var at = lanes.indexOf(lane);
      if (at >= 0) {
        var ring = document.createElementNS(SVG, "circle");
        ring.setAttribute("cx", x); ring.setAttribute("cy", top + laneH * at + 20);
        ring.setAttribute("r", 9);
        g.appendChild(ring);
      }
      svg.appendChild(g);
    }
  }

  // A fragment inside a folded list opens it, so the target is seen.
  function reveal(id) {
    var target = id && document.getElementById(id);
    if (!target) return;
    for (var node = target.parentNode; node; node = node.parentNode)
      if (node.tagName && node.tagName.toLowerCase() === "details") node.open = true;
    if (target.classList && target.classList.contains("step")) highlight(target);
  }

  function setZoom(box, zoom, label) {
    zoom = Math.max(1, Math.min(64, zoom));
    var svg = box.querySelector("svg.timeline");
    if (!svg) return;
    var centre = (box.scrollLeft + box.clientWidth / 2) / Math.max(box.scrollWidth, 1);
    svg.style.width = (zoom * 100) + "%";
    box.setAttribute("data-zoom", zoom);
    box.scrollLeft = centre * box.scrollWidth - box.clientWidth / 2;
    label.textContent = zoom + "×";
  }

  function zoomControls() {
    var boxes = document.querySelectorAll(".timeline-box");
    for (var i = 0; i < boxes.length; i++) {
      (function (box) {
        var bar = document.createElement("div");
        bar.className = "zoom-bar";
        var level = document.createElement("span");
        level.className = "zoom-level";
        level.textContent = "1×";
        var labels = [["−", 0.5], ["+", 2], ["reset", 0]];
        for (var k = 0; k < labels.length; k++) {
          (function (label, factor) {
            var button = document.createElement("button");
            button.type = "button";
            button.textContent = label;
            button.title = factor ? "zoom " + (factor > 1 ? "in" : "out") + " (or Ctrl + wheel)" : "whole run";
            button.addEventListener("click", function () {
              setZoom(box, factor ? Number(box.getAttribute("data-zoom") || 1) * factor : 1, level);
            });
            bar.appendChild(button);
          })(labels[k][0], labels[k][1]);
        }
        bar.appendChild(level);
        box.parentNode.insertBefore(bar, box);
        box.addEventListener("wheel", function (event) {
          if (!event.ctrlKey) return;
          event.preventDefault();
          setZoom(box, Number(box.getAttribute("data-zoom") || 1) * (event.deltaY < 0 ? 2 : 0.5), level);
        }, {passive: false});
        // Drag to pan a zoomed timeline.
        var dragging = null;
        box.addEventListener("mousedown", function (event) {
          if (Number(box.getAttribute("data-zoom") || 1) > 1) dragging = {x: event.clientX, left: box.scrollLeft};
        });
        window.addEventListener("mousemove", function (event) {
          if (dragging) box.scrollLeft = dragging.left - (event.clientX - dragging.x);
        });
        window.addEventListener("mouseup", function () { dragging = null; });
      })(boxes[i]);
    }
  }

  // n / p: the next or previous cause on the page.
  function jump(delta) {
    var causes = document.querySelectorAll(".cause");
    if (!causes.length) return;
    var at = -1;
    for (var i = 0; i < causes.length; i++)
      if (causes[i].getBoundingClientRect().top <= 10) at = i;
    var next = causes[Math.max(0, Math.min(causes.length - 1, at + delta))];
    next.scrollIntoView();
    history.replaceState(null, "", "#" + next.id);
  }

  // The comparison's grid: a square clicked (or named by the #fragment) says
  // what its cell measured, expected and why in the panel under the grid.
  function showSquare(square) {
    var panel = document.getElementById("grid-detail");
    if (!panel || !square) return;
    var old = document.querySelectorAll(".grid-sq.selected");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("selected");
    square.classList.add("selected");
    panel.textContent = square.getAttribute("data-detail");
  }

  function gridSquares() {
    var squares = document.querySelectorAll("button.grid-sq[data-detail]");
    for (var i = 0; i < squares.length; i++)
      squares[i].addEventListener("click", function (event) {
        showSquare(event.currentTarget);
        history.replaceState(null, "", "#" + event.currentTarget.id);
      });
    var named = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (named && named.classList.contains("grid-sq")) showSquare(named);
  }

  function start() {
    var steps = document.querySelectorAll(".step[data-t]");
    for (var i = 0; i < steps.length; i++)
      steps[i].addEventListener("click", function (event) { highlight(event.currentTarget); });
    zoomControls();
    gridSquares();
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var tag = (event.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "textarea") return;
      if (event.key === "n") jump(1);
      if (event.key === "p") jump(-1);
    });
    window.addEventListener("hashchange", function () { reveal(location.hash.slice(1)); });
    if (location.hash) reveal(decodeURIComponent(location.hash.slice(1)));
    document.documentElement.setAttribute("data-interactive", "ready");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
