// The DOM pass, part 2a (see observe-1-walk.js): library widgets over a hidden native element.
// Multi-selects, comboboxes and date pickers (Tom Select, select2, Choices, USWDS, ...) hide the native <select>
// or <input> they drive and show their own face beside it: chips, a shown label, a search field. The native
// element is no second control: the face is one control (its ref on the handle a user clicks or types in), with
// the native element's options and, as value, the selection the face SHOWS. The native element is tagged
// `data-sgr-widget=<handle ref>` and `W.__sgrFaceShown(handle)` reads the face again (the read-back uses it).
  const SR_ONLY_RE = /hidden|sr-only|visually|offscreen|accessible/i;
  const FACE_FIELDS = "select,input:not([type=hidden]),textarea";
  const FOCUSABLE = "input:not([type=hidden]),textarea,[role=combobox],[role=searchbox]";
  const tiny = (el) => {
    const r = el.getBoundingClientRect();
    return r.width <= 2 || r.height <= 2;
  };
  const concealed = (el) => {
    if (!visible(el) || tiny(el)) return true;
    const r = el.getBoundingClientRect();
    return r.right <= 0 || r.bottom <= 0 || getComputedStyle(el).opacity === "0";
  };
  const hiddenNative = (el) =>
    concealed(el) && !inClosedDetails(el) &&
    (attr(el, "tabindex") === "-1" || attr(el, "aria-hidden") === "true" || el.hidden || SR_ONLY_RE.test(cls(el)));
  const faceOf = (el) => {
    const isFace = (box) => !!box && box !== el && visible(box) && !box.matches("form,body,main,fieldset") &&
      box.querySelectorAll(FACE_FIELDS).length <= 3 &&
      [...box.querySelectorAll(FOCUSABLE)].some((f) => f !== el && visible(f) && !tiny(f));
    const p = el.parentElement;
    if (p && p.querySelectorAll("select").length <= 1 && isFace(p)) return p;
    for (let s = el.nextElementSibling, i = 0; s && i < 2; s = s.nextElementSibling, i++) if (isFace(s)) return s;
    return null;
  };
  const strongLabel = (el) => {
    const lb = attr(el, "aria-labelledby");
    const named = (lb && idsText(el, lb)) || norm(attr(el, "aria-label"));
    if (named) return named;
    const root = el.getRootNode();
    const lab = el.id && root.querySelector ? root.querySelector(`label[for="${CSS.escape(el.id)}"]`) : null;
    const wrap = el.closest("label");
    return (lab && ownText(lab)) || (wrap && ownText(wrap)) || "";
  };
  const dropdownOf = (handle) => {
    const ids = [attr(handle, "aria-controls"), attr(handle, "aria-owns")].filter(Boolean).join(" ").split(/\s+/);
    return ids.map((id) => id && byId(handle, id)).filter(Boolean);
  };
  // What the face shows as chosen: option labels that are an element's own text (a chip, the shown label) outside
  // the dropdown the handle opens, else the handle's own value (a combobox input shows its choice in it).
  const faceShown = (handle) => {
    const f = W.__sgrFaces && W.__sgrFaces.get(handle);
    if (!f) return null;
    const { face, native } = f;
    const drop = dropdownOf(handle);
    const known = new Map();
    if (tag(native) === "select") for (const o of native.options) known.set(norm(o.label || o.textContent).toLowerCase(), norm(o.label || o.textContent));
    else for (const v of (native.value || "").split(",")) if (norm(v)) known.set(norm(v).toLowerCase(), norm(v));
    const got = [];
    for (const n of face.querySelectorAll("*")) {
      if (n === handle || native.contains(n) || drop.some((d) => d.contains(n)) || !visible(n)) continue;
      const t = ownText(n, true).replace(/[×✕✖⨯]/g, "").trim().toLowerCase();
      if (t && known.has(t) && !got.includes(known.get(t))) got.push(known.get(t));
    }
    const typed = norm(handle.value || "");
    if (!got.length && typed && (known.has(typed.toLowerCase()) || tag(native) === "input")) got.push(typed);
    return got.join(", ");
  };
  if (W.__sgrFaces === undefined) W.__sgrFaces = new WeakMap();
  W.__sgrFaceShown = faceShown;
  const DATE_HINT_RE = /\b(mm|dd)\s*[\/.-]\s*(dd|mm)\b|\byyyy\b|\bdate\b|calendar/i;
  const dateish = (el) => {
    const hint = attr(el, "aria-describedby") ? idsText(el, attr(el, "aria-describedby")) : "";
    return /date|calendar/i.test(cls(el)) || DATE_HINT_RE.test(norm(attr(el, "placeholder")) + " " + hint);
  };
  for (const native of document.querySelectorAll("select, input:not([type=hidden]):not([type=checkbox]):not([type=radio])")) {
    if (consumed.has(native) || !hiddenNative(native)) continue;
    const face = faceOf(native);
    if (!face) continue;
    const outer = face.parentElement && attr(face.parentElement, "role") === "combobox" ? face.parentElement : null;
    const handle = [outer, face, ...face.querySelectorAll("[role=combobox]")].filter(Boolean).find((n) => attr(n, "role") === "combobox" && visible(n)) ||
      [...face.querySelectorAll("input:not([type=hidden]),textarea,[role=searchbox]")].find((n) => visible(n) && !tiny(n));
    if (!handle) continue;
    W.__sgrFaces.set(handle, { face, native });
    const isSelect = tag(native) === "select";
    const options = isSelect ? [...native.options].filter((o) => norm(o.label || o.textContent) && o.value !== "")
      .map((o) => ({ label: norm(o.label || o.textContent), value: o.value, selected: o.selected })) : [];
    const value = faceShown(handle);
    const label = strongLabel(native) || strongLabel(handle) || labelOf(native) || labelOf(handle);
    const kind = !isSelect && (dateish(handle) || dateish(native)) ? "date" : "custom_select";
    const ref = add(handle, { kind, label: withLegend(handle, label), name: attr(native, "name"), value, options,
                              multiple: isSelect && native.multiple, readonly: !!handle.readOnly });
    native.setAttribute("data-sgr-widget", ref);
    group(ref, [native, ...(outer || face).querySelectorAll("input,textarea,button,a,[role=button],[role=combobox],[role=searchbox],[role=listbox]")]
      .filter((m) => m !== handle));
  }
