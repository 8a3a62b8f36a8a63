/* Shared by lab pages: load the page's data.json and render a result table (the dataset a widget gates).
   Lab.load() -> Promise<data>; Lab.render(rows, columns, el): a table with "N results" above it. */
window.Lab = {
  load: function () {
    return fetch("data.json").then(function (r) { return r.json(); });
  },
  render: function (rows, columns, el) {
    var head = "<tr>" + columns.map(function (c) { return "<th>" + c.title + "</th>"; }).join("") + "</tr>";
    var body = rows.map(function (row) {
      return "<tr>" + columns.map(function (c) { return "<td>" + row[c.key] + "</td>"; }).join("") + "</tr>";
    }).join("");
    el.innerHTML = "<p class='count'>" + rows.length + " results</p>" +
      (rows.length ? "<table><thead>" + head + "</thead><tbody>" + body + "</tbody></table>" : "");
  }
};
