// Small DOM helpers: typed element lookup, text-only rendering (never innerHTML with data), and the
// problem/status boxes each section has.
import { MOVED_TEXT, type Problem } from './problem.ts';

export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  className?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** Shows `problem` as its title, one sentence, and whether anything moved, in the section's problem box. */
export function showProblem(section: string, problem: Problem): void {
  const box = $(`${section}-problem`);
  box.replaceChildren();
  box.append(el('strong', problem.title, 'problem-title'));
  if (problem.detail) box.append(el('p', problem.detail, 'problem-detail'));
  box.append(el('p', MOVED_TEXT[problem.moved], 'problem-moved'));
  box.hidden = false;
  box.focus();
}

export function clearProblem(section: string): void {
  const box = $(`${section}-problem`);
  box.hidden = true;
  box.replaceChildren();
}

export function setStatus(section: string, text: string, focus = false): void {
  const status = $(`${section}-status`);
  status.textContent = text;
  if (focus) status.focus();
}
