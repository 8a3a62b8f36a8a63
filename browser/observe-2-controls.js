// The DOM pass, part 2 of 5 (see observe-1-walk.js): chips, custom dropdowns, radio groups, query links, the
// control pass.
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


  // ------------------------------------------------------------------ tree nodes (ARIA treeitem)
  // A node of a checkbox tree (jsTree, Fancytree, react-checkbox-tree ...) is one checkbox control: its checked
  // state (aria-checked / aria-selected, or the checkbox in its own row), and whether it is open; the children of
  // a collapsed node are often not in the DOM at all, so the line says they exist.
  const treeRow = (item) => {
    const row = [];
    const visit = (node) => {
      for (const child of node.children) {
        if (attr(child, "role") === "group" || ["ul", "ol"].includes(tag(child))) continue;
        row.push(child);
        visit(child);
      }
    };
    visit(item);
    return row;
  };
  const treeNode = (item) => {
    const row = treeRow(item);
    const box = row.find((m) => attr(m, "role") === "checkbox" || (tag(m) === "input" && m.type === "checkbox"));
    const state = (v) => (v === "true" ? true : v === "mixed" ? "mixed" : v === "false" ? false : null);
    let checked = state(attr(item, "aria-checked"));
    if (checked === null && box) checked = tag(box) === "input" ? (box.indeterminate ? "mixed" : box.checked)
      : state(attr(box, "aria-checked"));
    if (checked === null) checked = state(attr(item, "aria-selected"));
    if (checked !== "mixed" && row.some((m) => /\b\w*(undetermined|indeterminate|partsel|half-?checked)\b/i.test(cls(m)))
        && !checked) checked = "mixed";
    const expandedAttr = attr(item, "aria-expanded");
    const text = norm(attr(item, "aria-label")) || norm(row.filter((m) => !m.children.length)
      .map((m) => m.textContent).join(" ")) || ownText(item);
    const level = parseInt(attr(item, "aria-level") || "0", 10) || null;
    add(item, { kind: "checkbox", label: text, value: checked === "mixed" ? "mixed" : null,
                checked: checked === true, expanded: expandedAttr === null ? null : expandedAttr === "true",
                level });
    group(refOf(item), row);
  };
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
                : type === "text" && dateish(el) ? "date" : "text";
      const c = { kind, label: withLegend(el, labelOf(el)), name, value: el.value, readonly: el.readOnly };
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
    if (role === "treeitem") {
      if (shown(el)) treeNode(el);
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

