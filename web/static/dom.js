// The DOM writes the views share.

/** Sets el's text only when it differs: views repaint every frame, and an unchanged text is not written again. */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** A new tag element holding text. */
export function textEl(tag, text) {
  const e = document.createElement(tag);
  e.textContent = text;
  return e;
}
