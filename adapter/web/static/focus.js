// After a check, the focus goes to the verdict, so a screen reader reads it first and the
// keyboard continues from there. Optional: without JavaScript the page reads top to bottom.
"use strict";
(function () {
  var verdict = document.getElementById("verdict");
  if (verdict) {
    verdict.focus();
  }
})();
