// payability page: progressive enhancement only. Without this script the two
// forms post to the page's own form routes and the server renders the answer;
// with it they call the JSON API (POST …/precheck, POST …/verify) and the
// answer is rendered here. Nothing is fetched from any other origin.
(function () {
  "use strict";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function render(box, ok, summary, code, detail, json) {
    var out = el("div", "outcome " + (ok ? "ok" : "refused"));
    var p = el("p", "summary");
    p.appendChild(el("strong", "", ok ? "\u2713" : "\u2717"));
    p.appendChild(document.createTextNode(" " + summary));
    out.appendChild(p);
    if (detail) {
      var d = el("p", "detail");
      d.appendChild(el("code", "", code));
      d.appendChild(document.createTextNode(" \u2014 " + detail));
      out.appendChild(d);
    }
    if (json) {
      var pre = el("pre", "", json);
      pre.tabIndex = 0;
      pre.setAttribute("aria-label", "Signed answer");
      out.appendChild(pre);
    }
    box.replaceChildren(out);
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: body,
      credentials: "omit",
    }).then(function (res) {
      return res.text().then(function (text) {
        var doc = null;
        try { doc = JSON.parse(text); } catch (e) { doc = null; }
        return { status: res.status, text: text, doc: doc };
      });
    });
  }

  var pre = document.getElementById("precheck-form");
  if (pre) {
    var urls = JSON.parse(pre.getAttribute("data-json-urls") || "{}");
    pre.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var box = document.getElementById("precheck-result");
      var op = pre.elements.op.value;
      var body = { url: pre.elements.url.value, op: op };
      if (pre.elements.caller.value) body.caller = pre.elements.caller.value;
      post(urls[op], JSON.stringify(body)).then(function (r) {
        var d = r.doc || {};
        if (r.status === 200) {
          render(box, true, "In policy. " + (d.assessability || ""), "", "", JSON.stringify(d, null, 2));
        } else if (r.status === 402) {
          render(box, false, "The free allowance is used up for now (" + d.error + "); the paid op's challenge is the answer's PAYMENT-REQUIRED header.", d.error, d.detail, "");
        } else {
          render(box, false, "Refused (HTTP " + r.status + "): " + (d.error || ""), d.error || "", d.detail || "", "");
        }
      }, function () {
        render(box, false, "The server could not be reached.", "", "", "");
      });
    });
  }

  var ver = document.getElementById("verify-form");
  if (ver) {
    ver.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var box = document.getElementById("verify-result");
      post(ver.getAttribute("data-json-url"), ver.elements.report.value).then(function (r) {
        var d = r.doc || {};
        if (r.status !== 200) {
          render(box, false, "Refused (HTTP " + r.status + "): " + (d.error || ""), d.error || "", d.detail || "", "");
        } else if (d.verified) {
          render(box, true, "Verified: signed by this server's " + d.key + " key (kid " + d.kid + ").", "", "", "");
        } else {
          render(box, false, "Not verified: " + d.reason + ".", d.reason, "", "");
        }
      }, function () {
        render(box, false, "The server could not be reached.", "", "", "");
      });
    });
  }
})();
