// Agent Finder page script: optional conveniences only. Every page works
// without it (links and forms carry all state in the URL).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // Changing the federation choice re-runs the search when there is one.
  var fed = document.getElementById("federation");
  var q = document.getElementById("q");
  if (fed && q) {
    fed.addEventListener("change", function () {
      if (q.value.trim() !== "") fed.form.submit();
    });
  }
  // Copy buttons next to ready-to-paste configuration.
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    var src = document.getElementById(b.getAttribute("data-copy"));
    if (!src || !navigator.clipboard) return;
    b.hidden = false;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(src.textContent).then(function () {
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = "Copy"; }, 1500);
      });
    });
  });
});
