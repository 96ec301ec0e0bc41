// Values a person copies rather than reads in full: an address or hash shown shortened, with its full text in
// a tooltip and a Copy button next to it, and the button itself (clipboard API; "Copied" for a moment).
import { el } from './dom.ts';
import { shortAddress } from './format.ts';

export function copyButton(value: string, what: string, text = 'Copy'): HTMLButtonElement {
  const button = el('button', text, 'btn btn-small btn-icon');
  button.type = 'button';
  button.setAttribute('aria-label', `${text === 'Copy' ? 'Copy' : text} ${what}`.trim());
  button.dataset.copy = value;
  button.addEventListener('click', () => {
    void navigator.clipboard.writeText(value).then(
      () => flash(button, 'Copied', text),
      () => flash(button, 'Copy failed', text),
    );
  });
  return button;
}

function flash(button: HTMLButtonElement, message: string, text: string): void {
  button.textContent = message;
  setTimeout(() => (button.textContent = text), 1500);
}

/** `value` shortened (full text on hover and for screen readers) with a Copy button. */
export function shortened(value: string, what: string): HTMLSpanElement {
  const wrap = el('span', undefined, 'address');
  const code = el('span', shortAddress(value), 'mono');
  code.title = value;
  code.dataset.full = value;
  wrap.append(code);
  if (value !== shortAddress(value)) wrap.append(copyButton(value, what));
  return wrap;
}
