/**
 * A tiny element builder for the inspector's shadow DOM, and a child replacement that keeps
 * keyboard focus on the element with the same `data-focus` key (a live re-render must not throw
 * a keyboard user back to the top).
 */
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (name === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replaces `container`'s children, moving focus to the new element with the focused one's `data-focus` key. */
export function replaceKeepingFocus(root: ShadowRoot, container: Element, ...children: Node[]): void {
  const active = root.activeElement;
  const focusKey = active instanceof HTMLElement && container.contains(active) ? active.dataset.focus : undefined;
  container.replaceChildren(...children);
  if (focusKey === undefined) return;
  const next = container.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focusKey)}"]`);
  // The element is gone (a retried dead letter): focus its section so the keyboard user stays there.
  (next ?? container.closest<HTMLElement>('[tabindex="-1"]'))?.focus();
}
