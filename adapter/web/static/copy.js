// A "Copy" button beside each copy box. Optional: without JavaScript the boxes are
// read-only text areas to select by hand. Loaded from 'self', as the CSP requires.
"use strict";
document.querySelectorAll("textarea.copy").forEach(function (box) {
  if (!navigator.clipboard) {
    return;
  }
  var button = document.createElement("button");
  button.type = "button";
  button.className = "copy-button";
  button.textContent = "Copy";
  button.setAttribute("aria-label", "Copy " + (box.labels[0] ? box.labels[0].textContent : "the text"));
  button.addEventListener("click", function () {
    navigator.clipboard.writeText(box.value).then(
      function () { button.textContent = "Copied"; },
      function () { box.select(); button.textContent = "Select and copy by hand"; }
    );
  });
  box.insertAdjacentElement("afterend", button);
});
