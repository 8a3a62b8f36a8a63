// The DOM pass, part 4 of 5 (see observe-1-walk.js): tables and card lists.
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
  // The links of the rows that travel get refs before their HTML is taken: a row's link is clicked by its ref.
  const linkRefs = (boxes) => {
    for (const box of boxes) {
      for (const a of [...(box.matches("a[href]") ? [box] : []), ...box.querySelectorAll("a[href]")]) {
        if (!(a.getAttribute("href") || "").trim().toLowerCase().startsWith("javascript:")) refOf(a);
      }
    }
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
    linkRefs(rows.length ? rows.slice(0, args.maxRows + 5) : [el]);
    let html = el.outerHTML;
    if (rows.length > args.maxRows + 5) {
      const kept = rows.slice(0, args.maxRows + 5).map((r) =>
        tag(r.parentElement) === "thead" ? `<thead>${r.outerHTML}</thead>` : r.outerHTML);
      html = `<table>${el.caption ? el.caption.outerHTML : ""}${kept.join("")}</table>`;
    }
    // a virtualised ARIA grid holds only the rows in view; it states its whole count (header rows included)
    const stated = parseInt(attr(el, "aria-rowcount") || "", 10);
    tables.push({ kind: "table", html: html.slice(0, args.maxTableHtml), total: rows.length || (stated > 0 ? stated : null),
                  order: all.indexOf(el), rank: rankOf(el) });
  }
  const NOT_CARDS = "nav,header,footer,form,aside,select,table,[role=listbox],[role=navigation],[role=tablist],"
    + "[role=tree]";
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
    linkRefs([...el.children].slice(0, args.maxRows + 5));
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

