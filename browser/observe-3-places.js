// The DOM pass, part 3 of 5 (see observe-1-walk.js): tool panels, repeated items, each control's place.
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

