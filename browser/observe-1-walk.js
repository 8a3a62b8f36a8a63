// One pass over a frame's DOM (open shadow roots included) that finds what sets retrieval state.
// Called as `frame.evaluate(SOURCE, args)` (see browser/observe.py); returns a JSON string.
// Elements get a `data-sgr-ref` attribute once and keep it, so refs are stable for the life of a page;
// members of a grouped control (radios, options, link lists) also get `data-sgr-group` = the control ref.
// One function body kept in five files by concern (observe-1-walk.js ... observe-5-text.js), joined in
// order by browser/observe.py `observe_script()`; the parts share the body's closures, so none runs alone.
(args) => {
  const W = window;
  if (W.__sgrPrefix === undefined) {
    W.__sgrPrefix = args.prefix;
    W.__sgrNext = 1;
  }
  const P = W.__sgrPrefix;
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const refOf = (el) => {
    let r = el.getAttribute("data-sgr-ref");
    if (!r) {
      r = P + "e" + W.__sgrNext++;
      el.setAttribute("data-sgr-ref", r);
    }
    return r;
  };
  const tag = (el) => el.tagName.toLowerCase();
  const attr = (el, a) => el.getAttribute(a);
  const cls = (el) => (typeof el.className === "string" ? el.className : attr(el, "class") || "");

  // ------------------------------------------------------------------ DOM walk (light + open shadow)
  const all = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      all.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);

  const closestDeep = (el, sel) => {
    // closest() that crosses shadow boundaries
    let node = el;
    while (node) {
      const hit = node.closest ? node.closest(sel) : null;
      if (hit) return hit;
      const root = node.getRootNode();
      node = root && root.host ? root.host : null;
    }
    return null;
  };
  const inClosedDetails = (el) => {
    const d = closestDeep(el, "details:not([open])");
    return !!d && !closestDeep(el, "summary");
  };
  const visible = (el) => {
    if (el.checkVisibility) return el.checkVisibility({ visibilityProperty: true });
    return !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  };
  const shown = (el) => visible(el) || inClosedDetails(el);
  const byId = (el, id) => {
    const root = el.getRootNode();
    return (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id);
  };

  // Text of an element without the option lists or values of controls nested inside it.
  const ownText = (el, skipButtons = false) => {
    const parts = [];
    const visit = (node) => {
      for (const child of node.childNodes) {
        if (child.nodeType === 3) parts.push(child.nodeValue);
        else if (child.nodeType === 1) {
          const t = tag(child);
          if (["select", "option", "textarea", "script", "style", "input", "datalist", "template"].includes(t))
            continue;
          const role = attr(child, "role");
          if (role === "listbox" || role === "option") continue;
          if (skipButtons && (t === "button" || role === "button")) continue;
          visit(child);
        }
      }
    };
    visit(el);
    return norm(parts.join(" "));
  };
  const idsText = (el, ids) =>
    norm(
      ids
        .split(/\s+/)
        .map((id) => byId(el, id))
        .filter(Boolean)
        .map((n) => ownText(n))
        .join(" ")
    );
  const legendOf = (el) => {
    const fs = closestDeep(el, "fieldset");
    if (!fs) return "";
    const lg = fs.querySelector(":scope > legend");
    return lg ? ownText(lg) : "";
  };
  const precedingText = (el) => {
    // `<span>Sort by</span><select>`: a short text just before the control.
    let prev = el.previousSibling;
    for (let i = 0; prev && i < 3; i++, prev = prev.previousSibling) {
      const t = norm(prev.nodeType === 1 ? ownText(prev) : prev.nodeValue);
      if (t) return t.length <= 40 && !(prev.nodeType === 1 && prev.matches("input,select,button,a")) ? t : "";
    }
    return "";
  };
  const labelOf = (el) => {
    const lb = attr(el, "aria-labelledby");
    if (lb) {
      const t = idsText(el, lb);
      if (t) return t;
    }
    const al = norm(attr(el, "aria-label"));
    if (al) return al;
    if (el.id) {
      const root = el.getRootNode();
      const lab = root.querySelector ? root.querySelector(`label[for="${CSS.escape(el.id)}"]`) : null;
      if (lab) {
        const t = ownText(lab);
        if (t) return t;
      }
    }
    const wrap = el.closest("label");
    if (wrap) {
      const t = ownText(wrap);
      if (t) return t;
    }
    const ph = norm(attr(el, "placeholder"));
    if (ph) return ph;
    const title = norm(attr(el, "title"));
    if (title) return title;
    const pre = precedingText(el);
    if (pre) return pre;
    return norm(attr(el, "name")) || "";
  };
  const withLegend = (el, label) => {
    const lg = legendOf(el);
    if (!lg || label.toLowerCase().includes(lg.toLowerCase())) return label;
    return label ? `${lg}: ${label}` : lg;
  };
  const formOf = (el) => {
    const f = el.form || closestDeep(el, "form");
    if (!f) return null;
    return attr(f, "id") || attr(f, "name") || attr(f, "action") || "form";
  };
  const disabled = (el) => !!(el.disabled || attr(el, "aria-disabled") === "true");

  // Where an element sits: 0 main content, 1 elsewhere in the body, 2 site chrome (menus, header, footer,
  // sidebars). Outline, links and tables are ordered by it, so a budget cut falls on chrome first.
  const MAIN_SEL = "main,[role=main]";
  const CHROME_SEL = "nav,header,footer,aside,[role=navigation],[role=banner],[role=contentinfo],[role=complementary],[role=menubar],[role=menu]";
  const mainEl = document.querySelector(MAIN_SEL) || document.querySelector("#main,#content,.content,article");
  // The heading that names the page (the h1, or a heading whose text the title holds) is content wherever it sits.
  const titleText = norm(document.title).toLowerCase();
  const pageHeading = [...document.querySelectorAll("h1")].find(visible) ||
    [...document.querySelectorAll("h2,h3")].find((h) => visible(h) && norm(h.textContent).length >= 8 &&
                                                 titleText.includes(norm(h.textContent).toLowerCase()));
  // Tool panels (a group of on/off toggles for third-party features, with their help links and cards) are
  // chrome however many controls they hold; found after the control pass, below.
  const toolPanels = [];
  const rankOf = (el) => {
    if (pageHeading && (el === pageHeading || pageHeading.contains(el))) return 0;
    if (toolPanels.some((b) => b.contains(el))) return 2;
    const chrome = closestDeep(el, CHROME_SEL);
    const inMain = !!mainEl && mainEl.contains(el);
    if (chrome && !(inMain && mainEl.contains(chrome) && chrome !== mainEl)) return 2;
    return inMain || !mainEl ? 0 : 1;
  };
  // The widget panel or landmark a control sits in (the nearest one below the main content), so a panel of
  // many controls can be shown as one line when the budget is short; keyed per page in `__sgrBoxes`.
  const WIDGET_SEL = "[role=tablist],[role=toolbar],[role=menubar],[role=menu],[role=group],[role=radiogroup]," +
    "[role=search],[role=dialog],dialog,fieldset,form,nav,header,footer,aside,[role=navigation],[role=banner]," +
    "[role=contentinfo],[role=complementary]";
  const REGION_SEL = "section,article,[role=region],details,li,[id]";
  if (W.__sgrBoxes === undefined) {
    W.__sgrBoxes = new WeakMap();  // no attribute: the page's markup (and error messages quoting it) stays as is
    W.__sgrNextBox = 1;
  }
  const boxKey = (box) => {
    let k = W.__sgrBoxes.get(box);
    if (!k) {
      k = "b" + W.__sgrNextBox++;
      W.__sgrBoxes.set(box, k);
    }
    return k;
  };
  const boxOfControl = (el) => {
    for (let node = el.parentElement; node && node !== document.body; node = node.parentElement) {
      if (mainEl && node === mainEl) break;
      if (node.matches(WIDGET_SEL)) return node;
    }
    const region = el.parentElement && el.parentElement.closest(REGION_SEL);
    if (region && region !== document.body && region !== mainEl && !(mainEl && region.contains(mainEl))) return region;
    return null;
  };
  const HEAD_SEL = "h1,h2,h3,h4,h5,h6,legend,caption,[role=heading]";
  const precedes = (a, b) => !a.contains(b) && !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
  // An id made of a word and a number ("comment-103515357") names the kind of item, not this one: "comment".
  const idKind = (el) => (el.id && /\d/.test(el.id)
    ? el.id.replace(/[-_:.]?\d+/g, "").replace(/^[-_:.]+|[-_:.]+$/g, "") : "");
  // A panel's name: its ARIA name, the heading that opens it (before `first`, the first control or item it
  // holds; a heading further down belongs to the content, not the panel), a heading just before it, its id.
  const boxLabel = (box, first, fallback = "") => {
    const lb = attr(box, "aria-labelledby");
    const named = norm(attr(box, "aria-label")) || (lb ? idsText(box, lb) : "");
    if (named) return cut(named, 60);
    const headText = (h) => norm(h.innerText) || ownText(h);  // as shown: a hidden count in it is no part of it
    const head = box.querySelector(HEAD_SEL);
    if (head && headText(head) && (!first || precedes(head, first))) return cut(headText(head), 60);
    let prev = box.previousElementSibling;
    for (let i = 0; prev && i < 2; i++, prev = prev.previousElementSibling) {
      if (/^h[1-6]$/.test(tag(prev)) && headText(prev)) return cut(headText(prev), 60);
    }
    return cut(fallback || idKind(box) || attr(box, "id") || attr(box, "role") || tag(box), 60);
  };

  const controls = [];
  const consumed = new Set();
  const controlEls = [];
  const add = (el, c) => {
    c.ref = refOf(el);
    c.form = c.form === undefined ? formOf(el) : c.form;
    c.disabled = c.disabled === undefined ? disabled(el) : c.disabled;
    controls.push(c);
    controlEls.push(el);
    consumed.add(el);
    return c.ref;
  };
  const group = (ref, members) => {
    for (const m of members) {
      refOf(m);
      m.setAttribute("data-sgr-group", ref);
      consumed.add(m);
    }
  };

  const PAGE_SIZE_RE = /per[\s_-]?page|page[\s_-]?size|results per|items per|rows per|show(ing)?\b|display|limit|\bsize\b/i;
  const isPageSize = (label, name, options) =>
    (PAGE_SIZE_RE.test(label) || PAGE_SIZE_RE.test(name || "")) &&
    options.length > 0 &&
    options.every((o) => /^\s*(\d+|all)\b/i.test(o.label));

