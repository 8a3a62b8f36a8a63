// One pass over a frame's DOM (open shadow roots included) that finds what sets retrieval state.
// Called as `frame.evaluate(SOURCE, args)` (see browser/observe.py); returns a JSON string.
// Elements get a `data-sgr-ref` attribute once and keep it, so refs are stable for the life of a page;
// members of a grouped control (radios, options, link lists) also get `data-sgr-group` = the control ref.
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

  // ------------------------------------------------------------------ chips (active filters)
  const CHIP_BOX_RE = /(active|applied|selected|current)[\s_-]?(filters?|facets?)|\bchips?\b|filter[\s_-]?tags/i;
  const CHIP_RE = /\bchip\b|\bpill\b|filter[\s_-]?(chip|tag|pill)|active[\s_-]?filter\b/i;
  const chips = [];
  const chipEls = new Set();
  for (const el of all) {
    const sig = cls(el) + " " + (el.id || "") + " " + (attr(el, "aria-label") || "");
    if (CHIP_BOX_RE.test(sig) && !CHIP_RE.test(cls(el)) && el.children.length) {
      for (const child of el.children) if (ownText(child)) chipEls.add(child);
    } else if (CHIP_RE.test(cls(el))) {
      chipEls.add(el);
    }
  }
  for (const chip of chipEls) {
    if (!visible(chip)) continue;
    let parent = chip.parentElement;
    let nested = false;
    while (parent) {
      if (chipEls.has(parent)) nested = true;
      parent = parent.parentElement;
    }
    if (nested) continue;
    const text = norm(ownText(chip).replace(/[×✕✖⨯]|\bremove\b/gi, " "));
    if (!text || text.length > 80) continue;
    chips.push(text);
    const remover = chip.matches("a,button,[role=button]") ? chip : chip.querySelector("a,button,[role=button]");
    const target = remover || chip;
    const ref = add(target, { kind: "chip", label: text, value: null });
    if (remover && remover !== chip) consumed.add(chip);
    group(ref, [chip, ...chip.querySelectorAll("a,button,[role=button]")].filter((m) => m !== target));
  }

  // ------------------------------------------------------------------ custom ARIA dropdowns
  const optionOf = (o) => {
    const label = norm(attr(o, "aria-label")) || ownText(o) || norm(o.textContent);
    return {
      label,
      value: attr(o, "data-value") || attr(o, "value") || label,
      selected: attr(o, "aria-selected") === "true" || attr(o, "aria-checked") === "true",
    };
  };
  const listboxFor = (el) => {
    for (const a of ["aria-controls", "aria-owns"]) {
      const v = attr(el, a);
      if (v) {
        for (const id of v.split(/\s+/)) {
          const n = byId(el, id);
          if (n) return n.matches("[role=listbox]") ? n : n.querySelector("[role=listbox]") || n;
        }
      }
    }
    const inner = el.querySelector("[role=listbox]");
    if (inner) return inner;
    const box = el.parentElement;
    return box ? box.querySelector(":scope > [role=listbox], :scope > * > [role=listbox]") : null;
  };
  const customSelect = (el, listbox) => {
    const opts = listbox ? [...listbox.querySelectorAll("[role=option]")] : [];
    const options = opts.map(optionOf);
    const chosen = options.filter((o) => o.selected).map((o) => o.label);
    let value = chosen.join(", ");
    if (!value) value = tag(el) === "input" ? el.value : ownText(el);
    let label = labelOf(el);
    if (label === value || !label) {
      const lbl = listbox && labelOf(listbox);
      label = lbl && lbl !== value ? lbl : label || legendOf(el) || precedingText(el) || "dropdown";
    }
    const ref = add(el, { kind: "custom_select", label: withLegend(el, label), value, options });
    group(ref, listbox ? [listbox, ...opts] : opts);
  };

  // ------------------------------------------------------------------ radio groups
  const radioGroup = (first) => {
    const name = attr(first, "name");
    const root = first.form || first.getRootNode();
    const radios = name
      ? [...root.querySelectorAll(`input[type=radio][name="${CSS.escape(name)}"]`)].filter(shown)
      : [first];
    const box =
      closestDeep(first, "[role=radiogroup]") ||
      closestDeep(first, "fieldset") ||
      (radios.length > 1 ? commonAncestor(radios) : null) ||
      first;
    const options = radios.map((r) => ({
      label: labelOf(r) || r.value,
      value: r.value,
      selected: r.checked,
    }));
    const label =
      (box !== first && (legendOf(radios[0]) || labelOf(box))) ||
      norm(attr(box, "aria-label")) ||
      name ||
      "options";
    const chosen = options.find((o) => o.selected);
    const ref = add(box, {
      kind: "radio_group",
      label,
      name,
      value: chosen ? chosen.label : null,
      options,
      form: formOf(first),
      disabled: radios.every((r) => r.disabled),
    });
    group(ref, radios);
  };
  const commonAncestor = (els) => {
    let a = els[0].parentElement;
    while (a && !els.every((e) => a.contains(e))) a = a.parentElement;
    return a && a !== document.body ? a : null;
  };
  const ariaRadioGroup = (box) => {
    const radios = [...box.querySelectorAll("[role=radio]")];
    // A div radio's own text is its label; labelOf would fall back to nearby text (the previous option's).
    const options = radios.map((r) => ({
      label: norm(attr(r, "aria-label")) || ownText(r) || labelOf(r),
      value: attr(r, "data-value") || ownText(r),
      selected: attr(r, "aria-checked") === "true",
    }));
    const chosen = options.find((o) => o.selected);
    const ref = add(box, {
      kind: "radio_group",
      label: labelOf(box) || legendOf(box) || "options",
      value: chosen ? chosen.label : null,
      options,
    });
    group(ref, radios);
  };

  // ------------------------------------------------------------------ links that change the page's query
  const here = new URL(location.href);
  const PAGE_KEY_RE = /^(page|p|pg|pagenum|page_?number|offset|start|from|skip|cursor)$/i;
  const ACTIVE_RE = /\b(active|selected|current|is-active|is-selected|on)\b/i;
  const linkGroups = new Map();
  const queryLinks = [];
  const TAB_BOX_RE = /\b(tabs?|tab-?list|views?|view-?switch(er)?|segmented|toggle-?group|nav-?tabs)\b/i;
  const pagerLinks = [];

  const PAGER_BOX = "nav[aria-label*=pagin i], [class*=pagin i], [id*=pagin i], [class*=pager i], [aria-label*=pagin i]";

  const tabLike = (el) => {
    const box = el.parentElement && (closestDeep(el, "[role=tablist]") || null);
    if (box) return box;
    let p = el.parentElement;
    for (let i = 0; p && i < 3; i++, p = p.parentElement) {
      if (TAB_BOX_RE.test(cls(p) + " " + (p.id || ""))) return p;
    }
    return null;
  };
  const isActive = (el) =>
    attr(el, "aria-selected") === "true" ||
    attr(el, "aria-pressed") === "true" ||
    (attr(el, "aria-current") && attr(el, "aria-current") !== "false") ||
    ACTIVE_RE.test(cls(el)) ||
    (el.parentElement && ACTIVE_RE.test(cls(el.parentElement)) && el.parentElement.children.length === 1);

  // ------------------------------------------------------------------ main control pass
  // Form fields that exist but are not rendered (collapsed panel, another tab, or the native element
  // behind a custom widget): not controls one can use now, but the caller should know they exist.
  const hiddenControls = [];
  const pressButtons = new Set();  // toggle buttons (aria-pressed): a vote or a bookmark, no tool switch
  const noteHidden = (el) => {
    if (attr(el, "aria-hidden") === "true" || el.disabled) return;
    hiddenControls.push(labelOf(el) || attr(el, "name") || tag(el));
  };
  for (const el of all) {
    if (consumed.has(el)) continue;
    const t = tag(el);
    const role = attr(el, "role");
    if (t === "select") {
      if (!shown(el)) { noteHidden(el); continue; }
      const options = [...el.options].map((o) => ({
        label: norm(o.label || o.textContent),
        value: o.value,
        selected: o.selected,
      }));
      const label = withLegend(el, labelOf(el));
      const value = options.filter((o) => o.selected).map((o) => o.label).join(", ");
      const kind = isPageSize(label, attr(el, "name"), options) ? "page_size" : "select";
      add(el, { kind, label, name: attr(el, "name"), value, options });
      group(refOf(el), [...el.options]);
      continue;
    }
    if (t === "input") {
      const type = (attr(el, "type") || "text").toLowerCase();
      if (type === "hidden") continue;
      if (!shown(el)) { noteHidden(el); continue; }
      if (type === "radio") {
        radioGroup(el);
        continue;
      }
      if (role === "combobox") {
        customSelect(el, listboxFor(el));
        continue;
      }
      const name = attr(el, "name");
      if (type === "checkbox") {
        const isToggle = role === "switch" || /toggle|switch/i.test(cls(el) + " " + cls(el.parentElement || el));
        add(el, { kind: isToggle ? "toggle" : "checkbox", label: withLegend(el, labelOf(el)), name,
                  value: el.value === "on" ? null : el.value, checked: el.checked });
        continue;
      }
      if (["submit", "button", "reset", "image"].includes(type)) {
        const label = norm(el.value) || labelOf(el) || type;
        add(el, { kind: type === "submit" || type === "image" ? "submit" : "button", label, name, value: null });
        continue;
      }
      const kind =
        type === "search"
          ? "search"
          : ["date", "datetime-local", "month", "week", "time"].includes(type)
            ? "date"
            : type === "number"
              ? "number"
              : type === "range"
                ? "range"
                : "text";
      const c = { kind, label: withLegend(el, labelOf(el)), name, value: el.value };
      if (kind === "range" || kind === "number" || kind === "date") {
        const bounds = [attr(el, "min"), attr(el, "max")].map((v) => v || "");
        if (bounds[0] || bounds[1]) c.bounds = bounds.join("..");
      }
      add(el, c);
      continue;
    }
    if (t === "textarea") {
      if (!shown(el)) { noteHidden(el); continue; }
      add(el, { kind: "textarea", label: withLegend(el, labelOf(el)), name: attr(el, "name"), value: el.value });
      continue;
    }
    if (role === "radiogroup") {
      if (shown(el)) ariaRadioGroup(el);
      continue;
    }
    if (role === "combobox" || (attr(el, "aria-haspopup") === "listbox" && !el.closest("[role=combobox]"))) {
      if (shown(el)) customSelect(el, listboxFor(el));
      continue;
    }
    if (role === "listbox") {
      if (shown(el) && !el.closest("select")) customSelect(el, el);
      continue;
    }
    if (role === "checkbox" || role === "switch") {
      if (!shown(el)) continue;
      add(el, { kind: role === "switch" ? "toggle" : "checkbox", label: labelOf(el) || ownText(el),
                value: null, checked: attr(el, "aria-checked") === "true" });
      continue;
    }
    if (role === "tab") {
      if (!shown(el)) continue;
      add(el, { kind: "tab", label: labelOf(el) === attr(el, "name") ? ownText(el) : ownText(el) || labelOf(el),
                value: null, checked: isActive(el) });
      continue;
    }
    if (role === "menuitem" || role === "menuitemradio" || role === "menuitemcheckbox") {
      if (!shown(el)) continue;
      const text = norm(attr(el, "aria-label")) || ownText(el) || norm(attr(el, "title")) || "menu item";
      if (role === "menuitem") {
        add(el, { kind: "button", label: text, value: t === "a" && el.href ? el.href : null, form: null });
      } else {
        add(el, { kind: "checkbox", label: text, value: null, checked: attr(el, "aria-checked") === "true" });
      }
      for (const inner of el.querySelectorAll("a,button")) consumed.add(inner);
      continue;
    }
    if (t === "button" || role === "button") {
      if (!shown(el)) continue;
      const text = norm(attr(el, "aria-label")) || ownText(el) || norm(attr(el, "title")) || "button";
      const box = tabLike(el);
      if (box) {
        add(el, { kind: "tab", label: text, value: null, checked: !!isActive(el) });
        continue;
      }
      if (attr(el, "aria-pressed") !== null) {  // a toggle button (pressed or not), not a tab
        add(el, { kind: "toggle", label: text, value: null, checked: attr(el, "aria-pressed") === "true" });
        pressButtons.add(el);
        continue;
      }
      const type = (attr(el, "type") || (t === "button" && el.form ? "submit" : "button")).toLowerCase();
      add(el, { kind: type === "submit" ? "submit" : "button", label: text, value: null,
                name: attr(el, "name") });
      continue;
    }
    if (t === "a" && el.hasAttribute("href")) {
      if (!visible(el)) continue;
      let url;
      try {
        url = new URL(el.href, location.href);
      } catch (e) {
        continue;
      }
      const text = ownText(el) || norm(attr(el, "aria-label")) || norm(attr(el, "title"));
      const box = tabLike(el);
      if (box && text) {
        add(el, { kind: "tab", label: text, value: url.href, checked: !!isActive(el), form: null });
        continue;
      }
      const samePage = url.origin === here.origin && url.pathname === here.pathname && url.search !== here.search;
      if (samePage && text) {
        const keys = new Set([...url.searchParams.keys(), ...here.searchParams.keys()]);
        const changed = [...keys].filter(
          (k) => url.searchParams.getAll(k).join("\u0001") !== here.searchParams.getAll(k).join("\u0001")
        );
        const paging = changed.length > 0 && changed.every((k) => PAGE_KEY_RE.test(k));
        const inPager = !!closestDeep(el, PAGER_BOX);
        if (paging || inPager) {
          pagerLinks.push(el);
        }
        queryLinks.push({ el, url, text, changed, paging: paging || inPager });
      }
    }
  }

  // Group query-changing links by their container: a facet list, a sort bar, the pager.
  const boxOf = (el) =>
    closestDeep(el, PAGER_BOX) ||
    el.closest("ul,ol,nav,fieldset,[role=group],[role=list],[role=navigation],section,aside,form") ||
    el.parentElement;
  for (const q of queryLinks) {
    const box = boxOf(q.el);
    if (!linkGroups.has(box)) linkGroups.set(box, []);
    linkGroups.get(box).push(q);
  }
  const headingBefore = (box) => {
    const own = box.querySelector(":scope > h1,:scope > h2,:scope > h3,:scope > h4,:scope > h5,:scope > h6,:scope > legend,:scope > strong");
    if (own) return ownText(own);
    let prev = box.previousElementSibling;
    for (let i = 0; prev && i < 2; i++, prev = prev.previousElementSibling) {
      const t = ownText(prev);
      if (t && t.length <= 60) return t;
    }
    return "";
  };
  for (const [box, links] of linkGroups) {
    const paging = !!box.matches(PAGER_BOX) || links.every((q) => q.paging);
    if (links.length < 2 && !paging) continue; // a lone link (e.g. "reset search") stays a plain link
    const keys = [...new Set(links.flatMap((q) => q.changed))];
    const label =
      norm(attr(box, "aria-label")) || (paging ? "Pagination" : "") || headingBefore(box) || keys.join(", ") || "links";
    const options = links.map((q) => ({
      label: q.text,
      value: q.url.search || "?",
      selected: !!isActive(q.el),
    }));
    // the current state's own link is often a non-link span; add it as the selected option
    if (paging) {
      const cur = box.querySelector("[aria-current=page], .active, .current, .selected");
      if (cur && !cur.matches("a[href]") && !cur.querySelector("a[href]") && /^\d+$/.test(ownText(cur))) {
        options.push({ label: ownText(cur), value: here.search || "?", selected: true });
      }
    }
    const chosen = options.filter((o) => o.selected).map((o) => o.label);
    const ref = add(box, { kind: "link", label, value: chosen.join(", ") || null, options, form: null,
                           disabled: false, paging });
    group(ref, links.map((q) => q.el));
  }

  // ------------------------------------------------------------------ tool panels, then each control's place
  const TOGGLE_PANEL_MIN = 3;
  const TOOL_KINDS = ["toggle", "tab", "button", "link", "radio_group"];
  controls.forEach((c, i) => {
    if (c.kind !== "toggle" || pressButtons.has(controlEls[i])) return;
    const el = controlEls[i];
    let panel = null;  // the outermost box of >= 3 toggles whose controls are nearly all toggles, tabs and buttons
    for (let node = el.parentElement; node && node !== document.body && node !== mainEl; node = node.parentElement) {
      if ((pageHeading && node.contains(pageHeading)) || node.matches("main,article,[role=main]")) break;
      const inside = controls.filter((d, j) => node.contains(controlEls[j]));
      const toggles = controls.filter((d, j) => d.kind === "toggle" && !pressButtons.has(controlEls[j]) &&
                                      node.contains(controlEls[j])).length;
      const tooly = inside.filter((d) => TOOL_KINDS.includes(d.kind)).length;
      if (toggles >= TOGGLE_PANEL_MIN && tooly >= 0.8 * inside.length) panel = node;
    }
    if (panel && !toolPanels.some((b) => b.contains(panel))) {
      for (let k = toolPanels.length - 1; k >= 0; k--) if (panel.contains(toolPanels[k])) toolPanels.splice(k, 1);
      toolPanels.push(panel);
    }
  });
  // Repeated items (the posts of a thread, the results of a list): siblings of one kind - the same tag and first
  // class, or ids that differ only in their number - of which >= 3 hold controls. Per-item widgets (vote, share,
  // flag) repeat in each; they are keyed as one panel per run of items, named by the heading of the list.
  const REPEAT_MIN = 3;
  const CHILDREN = Object.getOwnPropertyDescriptor(Element.prototype, "children").get;
  const sigOf = (el) => {
    const kind = idKind(el);
    if (kind) return tag(el) + "#" + kind;
    const first = cls(el).trim().split(/\s+/).filter((x) => x && !ACTIVE_RE.test(x))[0];
    return first ? tag(el) + "." + first : "";
  };
  const runsByParent = new Map();
  const holdsControl = new Map();
  const hasControl = (item) => {
    if (!holdsControl.has(item)) holdsControl.set(item, controlEls.some((c) => item.contains(c)));
    return holdsControl.get(item);
  };
  const runOf = (el) => {
    const parent = el.parentElement;
    const sig = sigOf(el);
    if (!parent || !sig) return null;
    let bySig = runsByParent.get(parent);
    if (!bySig) {
      bySig = new Map();
      for (const child of CHILDREN.call(parent)) {  // a form's field named "children" hides form.children
        const s = sigOf(child);
        if (s) bySig.set(s, [...(bySig.get(s) || []), child]);
      }
      runsByParent.set(parent, bySig);
    }
    const run = bySig.get(sig);
    return run && run.length >= REPEAT_MIN && run.filter(hasControl).length >= REPEAT_MIN ? run : null;
  };
  const itemRunOf = (el) => {  // the outermost run of repeated items holding `el`, below the main element
    let found = null;
    for (let node = el.parentElement; node && node !== document.body && node !== mainEl; node = node.parentElement) {
      const run = runOf(node);
      if (run) found = run;
    }
    return found;
  };
  const boxes = controls.map((c, i) => {
    const el = controlEls[i];
    c.rank = rankOf(el);
    const panel = toolPanels.find((b) => b.contains(el));
    const box = panel || boxOfControl(el);
    const run = panel ? null : itemRunOf(el);
    if (run && !(box && box.contains(run[0].parentElement))) return { run };  // a widget around the list keeps its key
    return box ? { box } : null;
  });
  const firstInBox = new Map();  // a box's name comes from what opens it: a heading before its first control
  boxes.forEach((b, i) => {
    const first = b && b.box && firstInBox.get(b.box);
    if (b && b.box && (!first || precedes(controlEls[i], first))) firstInBox.set(b.box, controlEls[i]);
  });
  controls.forEach((c, i) => {
    const { run, box } = boxes[i] || {};
    if (run) {
      c.box = boxKey(run[0]);
      c.boxLabel = boxLabel(run[0].parentElement, run[0], idKind(run[0])) + ` (${run.length} items)`;
    } else if (box) {
      c.box = boxKey(box);
      c.boxLabel = boxLabel(box, firstInBox.get(box));
    }
  });

  // ------------------------------------------------------------------ tables and card lists
  const tables = [];
  const dataTables = [];
  const BLOCKS = "p,ul,ol,dl,h1,h2,h3,h4,h5,h6,form,blockquote,pre,article,section,nav";
  // A table used for page layout (nested tables, block content in header-less cells, one long row) is
  // read as text: outline and links, not one giant cell.
  const isLayoutTable = (el) => {
    if (["presentation", "none"].includes(attr(el, "role"))) return true;
    if (tag(el) !== "table") return false;
    if (el.querySelector("table")) return true;
    if (el.querySelector("th,thead,[role=columnheader]")) return false;
    const cells = [...el.querySelectorAll("td")];
    if (cells.some((c) => c.querySelector(BLOCKS))) return true;
    return el.rows.length <= 2 && cells.some((c) => norm(c.textContent).length > 200);
  };
  const tableEls = all.filter((el) => (tag(el) === "table" || ["table", "grid"].includes(attr(el, "role"))));
  for (const el of tableEls) {
    if (dataTables.some((d) => d.contains(el))) continue;
    if (!visible(el)) continue;
    if (!el.querySelector("td,[role=cell],[role=gridcell]")) continue;
    if (isLayoutTable(el)) continue;
    dataTables.push(el);
    // Long tables: only the first rows travel (serialising and parsing 5,000 rows costs seconds).
    const rows = tag(el) === "table" ? [...el.rows] : [];
    let html = el.outerHTML;
    if (rows.length > args.maxRows + 5) {
      const kept = rows.slice(0, args.maxRows + 5).map((r) =>
        tag(r.parentElement) === "thead" ? `<thead>${r.outerHTML}</thead>` : r.outerHTML);
      html = `<table>${el.caption ? el.caption.outerHTML : ""}${kept.join("")}</table>`;
    }
    tables.push({ kind: "table", html: html.slice(0, args.maxTableHtml), total: rows.length || null,
                  order: all.indexOf(el), rank: rankOf(el) });
  }
  const NOT_CARDS = "nav,header,footer,form,aside,select,table,[role=listbox],[role=navigation],[role=tablist]";
  const leafCount = (el) => {
    let n = 0;
    for (const d of el.querySelectorAll("*")) {
      if (!d.children.length && norm(d.textContent)) n++;
    }
    return n;
  };
  // A card of nothing but a heading and a list of links (a "Data / Resources / Help" link card) is site
  // navigation however central it sits: a card list of them ranks as chrome.
  const linkCard = (card) => {
    const links = [...card.querySelectorAll("a[href]")];
    if (links.length < 2) return false;
    const heads = [...card.querySelectorAll("h1,h2,h3,h4,h5,h6,[role=heading]")];
    const text = norm(card.textContent).length - heads.reduce((n, h) => n + norm(h.textContent).length, 0);
    const linked = links.filter((a) => !heads.some((h) => h.contains(a)))
      .reduce((n, a) => n + norm(a.textContent).length, 0);
    return text > 0 && linked >= 0.9 * text;
  };
  const cardBoxes = [];
  for (const el of all) {
    if (el.children.length < 3 || closestDeep(el, NOT_CARDS) || consumed.has(el)) continue;
    const sigs = new Map();
    for (const c of el.children) {
      const s = tag(c) + "." + cls(c).trim().split(/\s+/).filter((x) => !ACTIVE_RE.test(x)).sort().join(".");
      sigs.set(s, (sigs.get(s) || 0) + 1);
    }
    const [sig, n] = [...sigs.entries()].sort((a, b) => b[1] - a[1])[0];
    if (n < 3 || n < 0.6 * el.children.length || sig.startsWith("script") || sig.startsWith("option")) continue;
    const kids = [...el.children].filter((c) => visible(c));
    if (kids.length < 3) continue;
    const rich = kids.filter((c) => leafCount(c) >= 2 && norm(c.textContent).length >= 25);
    if (rich.length < 0.6 * kids.length) continue;
    // A wrapper of the page's sections is no result list: cards hold no main/form/page heading and are short.
    if (mainEl && el.contains(mainEl)) continue;
    if (kids.some((c) => c.querySelector("main,form,h1,nav,header,footer") || norm(c.textContent).length > 3000))
      continue;
    if (cardBoxes.some((b) => b.contains(el))) continue;
    cardBoxes.push(el);
    let html = el.outerHTML;
    if (el.children.length > args.maxRows + 5) {
      const shell = el.cloneNode(false);
      shell.innerHTML = [...el.children].slice(0, args.maxRows + 5).map((c) => c.outerHTML).join("");
      html = shell.outerHTML;
    }
    // link-card lists are chrome; a list inside one item of a repeated list (the comments under each post) is
    // read after the main text
    const rank = kids.every(linkCard) ? 2
      : rankOf(el) === 0 && mainEl && mainEl.contains(el) && itemRunOf(el) ? 1 : rankOf(el);
    tables.push({ kind: "cards", html: html.slice(0, args.maxTableHtml), total: n, order: all.indexOf(el), rank });
  }
  tables.sort((a, b) => a.rank - b.rank || a.order - b.order);

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
  const pushLine = (el, text, heading, order) => {
    const limit = heading ? 200 : rankOf(el) === 0 ? 1200 : 300;  // main content's paragraphs read whole
    const shownText = text.length > limit ? cut(text, limit) + ` [read_section ${refOf(el)}]` : text;
    const t = tag(el);
    // a long line of the main content may be shortened by the renderer when the main text does not fit whole:
    // its element gets a ref (after every control and link has one, so their refs stay as they were)
    const long = !heading && text.length > args.shortenFrom && rankOf(el) === 0 ? el : null;
    outlineItems.push({ line: heading ? "#".repeat(+t[1]) + " " + shownText : shownText, rank: rankOf(el), order,
                        el: long });
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
    if (consumed.has(el) || !visible(el) || skipBox(el) || emittedAbove(el)) continue;
    if (!heading && el.querySelector("[data-sgr-group]")) continue; // a facet entry: already a control option
    // inside a form, loose text (a format hint, a note) is read; labels and boxes holding fields go with controls
    if (!heading && el.closest("form") && (el.closest("label") || el.querySelector(FIELD_SEL))) continue;
    if (!heading && el.querySelector("p,li,ul,ol,table,h1,h2,h3,h4,h5,h6,div")) {
      if (directText(el) >= 2) mixedRuns(el);
      continue;
    }
    const text = lineText(el);
    if (!text || (!heading && text.length < 2)) continue;
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
    outlineMain,
    outlineRefs,
    links,
    linksTotal: linkItems.length,
    iframes,
    text: body ? body.innerText.slice(0, args.maxText) : "",
  });
};
