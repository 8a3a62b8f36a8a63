// The DOM pass, part 5 of 5 (see observe-1-walk.js): notices, the outline, plain links, the returned JSON.
  // ------------------------------------------------------------------ notices
  const NOTICE_RE = /cookie|consent|gdpr|modal|overlay|toast|\balert\b|flash|notice|banner|warning|\berror\b/i;
  const notices = [];
  const noticeEls = [];
  for (const el of all) {
    const role = attr(el, "role");
    const t = tag(el);
    const candidate =
      ["dialog", "alertdialog", "alert", "status"].includes(role) ||
      (t === "dialog" && el.open) ||
      attr(el, "aria-modal") === "true" ||
      (t !== "body" && t !== "html" && NOTICE_RE.test(cls(el) + " " + (el.id || "")));
    if (!candidate || !visible(el)) continue;
    if (noticeEls.some((n) => n.contains(el))) continue;
    // Not page notices: a menu's or navigation's contents (a popover shown because the page's styles did not
    // load), what the page hides from assistive technology, a heading, and the status line of one item of a
    // repeated list in the main content ("this post is hidden"): that item's own text, read in the outline.
    if (closestDeep(el, "[role=menu],[role=menubar],[role=navigation],nav,[aria-hidden=true]") || /^h[1-6]$/.test(t))
      continue;
    if (rankOf(el) === 0 && mainEl && mainEl.contains(el) && itemRunOf(el)) continue;
    const text = ownText(el, true);
    if (!text || text.length < 3) continue;
    noticeEls.push(el);
    const buttons = [...el.querySelectorAll("button,[role=button],a[href],input[type=submit],input[type=button]")]
      .filter(visible)
      .map((b) => `${ownText(b) || norm(b.value) || norm(attr(b, "aria-label"))} [${refOf(b)}]`);
    const kind = role === "dialog" || role === "alertdialog" || t === "dialog" || attr(el, "aria-modal") === "true"
      ? "dialog" : role || "notice";
    notices.push(`[${kind}] ${cut(text, 240)}` + (buttons.length ? ` — buttons: ${buttons.join(", ")}` : ""));
  }

  if (hiddenControls.length) {
    const names = hiddenControls.slice(0, 8).map((n) => `"${cut(n, 40)}"`).join(", ");
    const more = hiddenControls.length > 8 ? ` and ${hiddenControls.length - 8} more` : "";
    notices.push(`[hidden controls] ${hiddenControls.length} form field(s) not visible (collapsed panel, other ` +
                 `tab, or behind a custom widget): ${names}${more}`);
  }

  // ------------------------------------------------------------------ outline and plain links
  const SKIP_SEL = "select,[role=listbox],script,style,noscript,template";
  const skipBox = (el) =>
    closestDeep(el, SKIP_SEL) ||
    dataTables.some((d) => d.contains(el)) ||
    cardBoxes.some((b) => b.contains(el)) ||
    noticeEls.some((n) => n.contains(el));
  const TEXT_TAGS = new Set(["p", "li", "dd", "dt", "blockquote", "figcaption", "pre", "summary", "caption", "td", "th"]);
  const INLINE = new Set(["a", "span", "b", "i", "em", "strong", "small", "code", "label", "abbr", "sup", "sub",
    "font", "u", "s", "mark", "time", "cite", "q", "kbd", "var", "img", "svg", "path", "button", "option", "br"]);
  const directText = (el) => {
    let n = 0;
    for (const child of el.childNodes) if (child.nodeType === 3) n += norm(child.nodeValue).length;
    return n;
  };
  // A box whose children are all inline ("<span>Subjects:</span> <span>Symbolic Computation</span>") reads as
  // one line of text even without text of its own; a box holding only one link is that link, listed below.
  // Boxes of nothing but links or controls (a menu bar, a row of buttons) are left to the link and control lists.
  const inlineOnly = (el) => {
    if (!el.children.length || ![...el.children].every((c) => INLINE.has(tag(c)))) return false;
    const kids = [...el.childNodes].filter((c) => norm(c.textContent));
    const listed = (c) => c.nodeType === 1 && (tag(c) === "a" || consumed.has(c) || !!c.querySelector("a,button,input"));
    if (kids.length > 0 && !kids.every(listed)) return true;
    // in the page's own main element, a box of plain links is a line of content too (a listing's author line)
    const plainLinks = kids.every((c) => c.nodeType === 1 && tag(c) === "a" && !consumed.has(c));
    return kids.length > 0 && plainLinks && !!mainEl && mainEl !== document.body && mainEl.contains(el) &&
      rankOf(el) === 0 && tag(el) !== "a";
  };
  // Line text as the browser lays it out (inline markup joined without spurious spaces); boxes holding form
  // fields fall back to ownText, which leaves out option lists and typed values.
  const lineText = (el) =>
    el.querySelector("select,textarea,input,[role=listbox]") ? ownText(el) : norm(el.innerText || el.textContent);
  const position = new Map();
  all.forEach((el, i) => position.set(el, i));
  const lastInside = (el) => {
    let last = el;
    while (last.lastElementChild) last = last.lastElementChild;
    return position.has(last) ? position.get(last) : position.get(el);
  };
  const FIELD_SEL = "label,input,select,textarea,button,[role=combobox],[role=listbox],[role=radio],[role=checkbox]";
  const emitted = new Set();
  const emittedAbove = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) if (emitted.has(p)) return true;
    return false;
  };
  const outlineItems = [];
  // A term and its values are one line, "Subspecies: 4": apart, a one-character value ("4", "0") was too short
  // to be a line and the term read as empty (a played run opened a page to learn what read_facts then saw).
  const pairedDd = new Set();
  const withValues = (dt, text) => {
    const values = [];
    for (let sib = dt.nextElementSibling; sib && tag(sib) === "dd"; sib = sib.nextElementSibling) {
      pairedDd.add(sib);
      const value = lineText(sib);
      if (value) values.push(value);
    }
    return values.length ? `${text}: ${values.join("; ")}` : text;
  };
  const pushLine = (el, text, heading, order) => {
    const limit = heading ? 200 : rankOf(el) === 0 ? 1200 : 300;  // main content's paragraphs read whole
    const shownText = text.length > limit ? cut(text, limit) + ` [read_section ${refOf(el)}]` : text;
    const t = tag(el);
    // a long line of the main content may be shortened by the renderer when the main text does not fit whole:
    // its element gets a ref (after every control and link has one, so their refs stay as they were)
    const long = !heading && text.length > args.shortenFrom && rankOf(el) === 0 ? el : null;
    outlineItems.push({ line: heading ? "#".repeat(+t[1]) + " " + shownText : shownText, rank: rankOf(el), order,
                        el: long, cut: text.length > limit });
  };
  // Text runs of a box that mixes its own text with block children (a heading followed by loose text and
  // line breaks): each run between block children is one line, placed after the block before it.
  const mixedRuns = (el) => {
    let run = "";
    let order = position.get(el);
    const flush = () => {
      const text = norm(run);
      if (text.length >= 2) outlineItems.push({ line: text, rank: rankOf(el), order: order + 0.5 });
      run = "";
    };
    for (const child of el.childNodes) {
      if (child.nodeType === 3) run += child.nodeValue;
      else if (child.nodeType === 1) {
        const t = tag(child);
        if (t === "br") run += " ";
        else if (INLINE.has(t)) {
          if (!consumed.has(child) && visible(child) && !child.hasAttribute("data-sgr-group"))
            run += " " + (child.innerText || child.textContent) + " ";
        } else if (!SKIP_SEL.split(",").includes(t)) {
          flush();
          order = lastInside(child);
        }
      }
    }
    flush();
  };
  for (const el of all) {
    if (outlineItems.length >= args.maxOutline * 4) break;
    const t = tag(el);
    const heading = /^h[1-6]$/.test(t);
    const block = TEXT_TAGS.has(t) || (!INLINE.has(t) && (directText(el) >= 2 || inlineOnly(el)));
    if (!heading && !block) continue;
    if (consumed.has(el) || !visible(el) || skipBox(el) || emittedAbove(el) || pairedDd.has(el)) continue;
    if (!heading && el.querySelector("[data-sgr-group]")) continue; // a facet entry: already a control option
    // inside a form, loose text (a format hint, a note) is read; labels and boxes holding fields go with controls
    if (!heading && el.closest("form") && (el.closest("label") || el.querySelector(FIELD_SEL))) continue;
    if (!heading && el.querySelector("p,li,ul,ol,table,h1,h2,h3,h4,h5,h6,div")) {
      if (directText(el) >= 2) mixedRuns(el);
      continue;
    }
    let text = lineText(el);
    if (t === "dt") text = withValues(el, text);
    if (!text || (!heading && text.length < 2 && t !== "dd")) continue;
    emitted.add(el);
    pushLine(el, text, heading, position.get(el));
  }
  outlineItems.sort((a, b) => a.rank - b.rank || a.order - b.order);
  const outline = outlineItems.slice(0, args.maxOutline).map((o) => o.line);
  const outlineMain = outlineItems.slice(0, args.maxOutline).filter((o) => o.rank === 0).length;
  const linkItems = [];
  const seenLinks = new Set();
  for (const el of all) {
    if (linkItems.length >= args.maxLinks * 3) break;
    if (tag(el) !== "a" || !el.hasAttribute("href") || consumed.has(el) || el.hasAttribute("data-sgr-group"))
      continue;
    if (!visible(el) || skipBox(el)) continue;
    const text = ownText(el) || norm(attr(el, "aria-label")) || norm(attr(el, "title"));
    const href = el.href;
    if (!text || !href || href.startsWith("javascript:")) continue;
    const key = text + "\u0001" + href;
    if (seenLinks.has(key)) continue;
    seenLinks.add(key);
    linkItems.push({ ref: refOf(el), text: cut(text, 100), href, rank: rankOf(el) });
  }
  linkItems.sort((a, b) => a.rank - b.rank);
  const links = linkItems.slice(0, args.maxLinks).map(({ ref, text, href }) => ({ ref, text, href }));

  const iframes = [...document.querySelectorAll("iframe,frame")].map((f) => ({
    name: attr(f, "name") || attr(f, "id") || attr(f, "title") || "",
    src: f.src || "",
    ref: refOf(f),
  }));

  const outlineRefs = outlineItems.slice(0, args.maxOutline).map((o) => (o.el ? refOf(o.el) : ""));
  const outlineCut = outlineItems.slice(0, args.maxOutline).map((o) => !!o.cut);

  const body = document.body;
  // One JSON string: Playwright validates a returned object field by field, which costs more than the walk.
  return JSON.stringify({
    prefix: P,
    url: location.href,
    title: document.title || "",
    controls,
    chips,
    tables: tables.map(({ kind, html, total, rank }) => ({ kind, html, total, rank })),
    notices,
    outline,
    outlineTotal: outlineItems.length,
    outlineCut,
    outlineMain,
    outlineRefs,
    links,
    linksTotal: linkItems.length,
    iframes,
    text: body ? body.innerText.slice(0, args.maxText) : "",
  });
};
