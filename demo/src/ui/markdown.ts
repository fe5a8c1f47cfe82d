/**
 * A small, safe Markdown renderer for the published brief: headings, paragraphs, ordered and
 * unordered lists, `**bold**`, `*italic*` and `` `code` ``. It builds DOM nodes and sets text
 * through text nodes only, never HTML, so nothing the model writes can inject markup or script.
 */
type Block = { kind: 'heading'; level: number; text: string } | { kind: 'list'; ordered: boolean; items: string[] } | { kind: 'paragraph'; text: string };

function blocks(source: string): Block[] {
  const out: Block[] = [];
  let paragraph: string[] = [];
  const flush = (): void => {
    if (paragraph.length > 0) out.push({ kind: 'paragraph', text: paragraph.join(' ') });
    paragraph = [];
  };
  for (const raw of source.split(/\r?\n/)) {
    const line = raw.trim();
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (line === '') {
      flush();
    } else if (heading) {
      flush();
      out.push({ kind: 'heading', level: heading[1]!.length, text: heading[2]! });
    } else if (item) {
      flush();
      const ordered = item[2] !== undefined;
      const last = out.at(-1);
      if (last?.kind === 'list' && last.ordered === ordered) last.items.push(item[3]!);
      else out.push({ kind: 'list', ordered, items: [item[3]!] });
    } else {
      paragraph.push(line);
    }
  }
  flush();
  return out;
}

/** Inline spans: `code`, **bold**, *italic* (not nested), everything else as text. */
function inline(text: string): Node[] {
  const nodes: Node[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*/g;
  let at = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    if (m.index > at) nodes.push(document.createTextNode(text.slice(at, m.index)));
    const el = document.createElement(m[1] !== undefined ? 'code' : m[2] !== undefined ? 'strong' : 'em');
    el.textContent = m[1] ?? m[2] ?? m[3]!;
    nodes.push(el);
    at = m.index + m[0].length;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

/** The Markdown as DOM nodes; headings start at `baseLevel` (a `#` becomes `h{baseLevel}`). */
export function renderMarkdown(source: string, baseLevel = 3): Node[] {
  return blocks(source).map((block) => {
    if (block.kind === 'heading') {
      const el = document.createElement(`h${Math.min(6, baseLevel + block.level - 1)}`);
      el.append(...inline(block.text));
      return el;
    }
    if (block.kind === 'list') {
      const list = document.createElement(block.ordered ? 'ol' : 'ul');
      for (const item of block.items) {
        const li = document.createElement('li');
        li.append(...inline(item));
        list.append(li);
      }
      return list;
    }
    const p = document.createElement('p');
    p.append(...inline(block.text));
    return p;
  });
}
