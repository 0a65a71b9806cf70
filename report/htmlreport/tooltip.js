(function () {
  "use strict";
  var tip = document.getElementById("tip");

  function fmt(v, unit) {
    if (unit === "ns") {
      if (v >= 1e9) return (v / 1e9).toPrecision(4) + " s";
      if (v >= 1e6) return (v / 1e6).toPrecision(4) + " ms";
      if (v >= 1e3) return (v / 1e3).toPrecision(4) + " µs";
      return Math.round(v) + " ns";
    }
    return (v >= 100 ? Math.round(v).toString() : v.toPrecision(3)) + " " + unit;
  }

  function show(e, text) {
    tip.textContent = text;
    tip.hidden = false;
    var x = e.clientX + 14, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = e.clientX - tip.offsetWidth - 14;
    if (y + tip.offsetHeight > window.innerHeight) y = e.clientY - tip.offsetHeight - 14;
    tip.style.left = Math.max(x, 0) + "px";
    tip.style.top = Math.max(y, 0) + "px";
  }

  function hide() { tip.hidden = true; }

  // A line's points, labels and values, read once.
  function readLine(el) {
    var px = [];
    for (var i = 0; i < el.points.numberOfItems; i++) px.push(el.points.getItem(i).x);
    return {
      label: el.getAttribute("data-label"), px: px,
      xs: el.getAttribute("data-x").split(" "), vs: el.getAttribute("data-v").split(" ").map(Number)
    };
  }

  document.querySelectorAll("figure.chart svg.canvas").forEach(function (svg) {
    var lines = Array.prototype.map.call(svg.querySelectorAll("polyline[data-v]"), readLine);
    var guide = svg.querySelector("line.guide");
    var xunit = svg.getAttribute("data-xunit"), yunit = svg.getAttribute("data-yunit");
    var plot = svg.querySelector("rect.plot");
    var reach = plot ? plot.width.baseVal.value / 20 : 30;

    svg.addEventListener("mousemove", function (e) {
      var bar = e.target.closest("[data-tip]");
      if (bar) { show(e, bar.getAttribute("data-tip")); return; }
      var m = svg.getScreenCTM();
      if (!lines.length || !m) { hide(); return; }
      var at = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse()).x;
      var rows = [], head = null;
      lines.forEach(function (l) {
        var best = -1, dist = reach;
        for (var i = 0; i < l.px.length; i++) {
          var d = Math.abs(l.px[i] - at);
          if (d < dist) { dist = d; best = i; }
        }
        if (best < 0) return;
        if (head === null) {
          head = xunit === "%" ? "p" + l.xs[best] : l.xs[best] + " " + xunit;
          guide.setAttribute("x1", l.px[best]);
          guide.setAttribute("x2", l.px[best]);
        }
        rows.push(l.label + ": " + fmt(l.vs[best], yunit));
      });
      if (head === null) { hide(); guide.setAttribute("visibility", "hidden"); return; }
      guide.setAttribute("visibility", "visible");
      show(e, head + "\n" + rows.join("\n"));
    });
    svg.addEventListener("mouseleave", function () {
      hide();
      if (guide) guide.setAttribute("visibility", "hidden");
    });
  });
})();
