"""Keyboard shortcuts of the blind annotation page: label, class, submit, next/previous.

Why a small script through ``st.html(..., unsafe_allow_javascript=True)`` and not a
component: the maintained key-binding components (e.g. ``streamlit-shortcuts``) are not
among our pinned dependencies and each adds an iframe per binding; ``st.html`` is
built in (1.67), not iframed, and the script only *clicks* the page's own widgets, so
every shortcut goes through exactly the same callbacks (autosave, optimistic version
check, submit) as a mouse click. The script is a constant: it contains no user text.
Widgets are found through the ``st-key-<key>`` class Streamlit gives keyed containers
(``ann_label_box``, ``ann_class_box``, ``ann_actions``) and their visible labels; a class
is a checkbox, so its key toggles it (a click on its ``<input>``) and ``0`` clicks every ticked one.

The script body must not contain anything that looks like an HTML tag (not even in a comment):
``st.html`` then drops the listener (tests/test_labels_multiclass.py checks the constant).

The note is also committed 1.2 s after the last keystroke (blur and focus again), so its
draft is saved while typing and a reload keeps it as typed.

Keys (ignored while typing in a text field, except Ctrl/Cmd+Enter):
``a`` acceptable · ``f`` failure · ``u`` unsure · ``1``-``4`` toggle IUV, WNF, PC, UV · ``0`` clear the classes ·
``s`` or Ctrl+Enter submit · ``n`` next (skip, or back to the queue when reviewing) ·
``p`` previous (your last submitted label).
"""
from __future__ import annotations

import streamlit as st

HELP = ("Shortcuts: **a** acceptable · **f** failure · **u** unsure · **1–4** toggle IUV, WNF, PC, UV · "
        "**0** clear classes · "
        "**s** or **Ctrl+Enter** submit · **n** next/skip · **p** previous")

SCRIPT = """<script>
(function () {
  if (window.__sageShortcuts) { return; }
  window.__sageShortcuts = true;
  var CLASSES = ["IUV", "WNF", "PC", "UV"];
  function box(key) { return document.querySelector(".st-key-" + key); }
  function pick(key, text) {
    var b = box(key); if (!b) { return false; }
    var labels = b.querySelectorAll("label");
    for (var i = 0; i < labels.length; i++) {
      if (labels[i].innerText.trim() === text) { labels[i].click(); return true; }
    }
    return false;
  }
  // class checkboxes: toggle one by its label text; clear = click every ticked (enabled) one.
  // The click goes to the input element itself: Streamlit's checkbox (react-aria) ignores a scripted
  // click on its label element (the label's press and the forwarded input click cancel out)
  function classBoxes() {
    var b = box("ann_class_box"); if (!b) { return []; }
    var out = [], labels = b.querySelectorAll("label");
    for (var i = 0; i < labels.length; i++) {
      var inp = labels[i].querySelector("input[type=checkbox]");
      if (inp) { out.push({label: labels[i], input: inp, text: labels[i].innerText.trim()}); }
    }
    return out;
  }
  function toggleClass(text) {
    var bs = classBoxes();
    for (var i = 0; i < bs.length; i++) {
      if (bs[i].text === text && !bs[i].input.disabled) { bs[i].input.click(); return true; }
    }
    return false;
  }
  function clearClasses() {
    var bs = classBoxes(), done = false;
    for (var i = 0; i < bs.length; i++) {
      if (bs[i].input.checked && !bs[i].input.disabled) { bs[i].input.click(); done = true; }
    }
    return done;
  }
  function press(texts) {
    var b = box("ann_actions"); if (!b) { return false; }
    var buttons = b.querySelectorAll("button");
    for (var i = 0; i < buttons.length; i++) {
      if (texts.indexOf(buttons[i].innerText.trim()) >= 0 && !buttons[i].disabled) {
        buttons[i].click(); return true;
      }
    }
    return false;
  }
  // the note is saved while typing: 1.2 s after the last keystroke the field is committed
  // (blur + focus again, caret kept), which runs its on_change autosave like leaving the field does
  var noteTimer = null;
  document.addEventListener("input", function (e) {
    var t = e.target;
    if (!t || t.tagName !== "TEXTAREA" || !t.closest || !t.closest(".st-key-ann_note_box")) { return; }
    clearTimeout(noteTimer);
    noteTimer = setTimeout(function () {
      if (document.activeElement !== t) { return; }  // already committed by leaving the field
      var a = t.selectionStart, b = t.selectionEnd;
      t.blur(); t.focus();
      try { t.setSelectionRange(a, b); } catch (err) { /* the field was re-rendered */ }
    }, 1200);
  }, true);
  document.addEventListener("keydown", function (e) {
    var t = e.target || {};
    var tag = (t.tagName || "").toLowerCase();
    var typing = tag === "textarea" || t.isContentEditable ||
      (tag === "input" && !/^(radio|checkbox|button|submit)$/i.test(t.type || ""));
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      if (typing && t.blur) { t.blur(); }  // commit the note first (its on_change autosaves)
      e.preventDefault();
      setTimeout(function () { press(["Submit label", "Revise label"]); }, typing ? 300 : 0);
      return;
    }
    if (typing || e.altKey || e.ctrlKey || e.metaKey || e.repeat) { return; }
    var k = (e.key || "").toLowerCase();
    var done = false;
    if (k === "a") { done = pick("ann_label_box", "acceptable"); }
    else if (k === "f") { done = pick("ann_label_box", "failure"); }
    else if (k === "u") { done = pick("ann_label_box", "unsure"); }
    else if (k === "0") { done = clearClasses(); }
    else if (k.length === 1 && "1234".indexOf(k) >= 0) { done = toggleClass(CLASSES[+k - 1]); }
    else if (k === "s") { done = press(["Submit label", "Revise label"]); }
    else if (k === "n") { done = press(["Skip", "Next"]); }
    else if (k === "p") { done = press(["Previous"]); }
    if (done) { e.preventDefault(); }
  });
})();
</script>"""


def install() -> None:
    """Add the shortcut listener to the page (once per browser tab; idempotent)."""
    st.html(SCRIPT, unsafe_allow_javascript=True)


__all__ = ["HELP", "SCRIPT", "install"]
