package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The origin cases: one origin, its discovery documents as fetched and its
// listed resources' live responses; the expected result is the document
// findings (each resource's own result is what a one-URL case pins).

const shop = "https://seller.example"

type originSynth struct {
	id, note string
	oc       originCase
}

func capOf(r *resp) outCapture {
	c := outCapture{Outcome: r.outcome, Headers: map[string]string{}, BodyText: r.body}
	if r.status != 0 {
		s := r.status
		c.Status = &s
	}
	for _, h := range r.headers {
		c.Headers[h[0]] = h[1]
	}
	return c
}

func doc200(body string) outCapture {
	return capOf((&resp{outcome: "ok", status: 200}).set("Content-Type", "application/json").text(body))
}

func status(code int) outCapture { return capOf((&resp{outcome: "ok", status: code}).text("")) }

// liveAt is a clean v2 challenge for path with the given entries.
func liveAt(path string, entries ...M) outCapture {
	d := v2Doc(entries...)
	d["resource"].(M)["url"] = shop + path
	return capOf(header402(d))
}

func wellKnownDocs(wk, manifest outCapture) []originDoc {
	return []originDoc{
		{Leg: "well-known", URL: shop + "/.well-known/x402", Capture: wk},
		{Leg: "manifest", URL: shop + "/.well-known/x402.json", Capture: manifest},
	}
}

// item is a manifest item for path listing entries.
func item(path string, entries ...M) M {
	acc := make([]any, len(entries))
	for i, e := range entries {
		acc[i] = e
	}
	return M{"resource": M{"url": shop + path}, "type": "http", "accepts": acc, "input": M{"method": "GET", "routeTemplate": path}}
}

func manifestOf(items ...M) string {
	arr := make([]any, len(items))
	for i, it := range items {
		arr[i] = it
	}
	return string(enc(M{"x402Version": num("2"), "lastUpdated": num("1781555511"), "items": arr}))
}

func openAPIOf(paths M) string {
	return string(enc(M{"openapi": "3.1.0", "info": M{"title": "shop", "version": "1"}, "paths": paths}))
}

func paidOp(price any) M {
	return M{"x-payment-info": M{"price": price, "protocols": []any{M{"x402": M{}}}}, "responses": M{"402": M{"description": "Payment Required"}}}
}

func usd(amount string) M { return M{"mode": "fixed", "currency": "USD", "amount": amount} }

func originCases() []originSynth {
	var out []originSynth
	add := func(id, note string, oc originCase) {
		if oc.Origin == "" {
			oc.Origin = shop
		}
		out = append(out, originSynth{"origin-" + id, note, oc})
	}
	missing := status(404)
	sv, ev := svmEntry, evmEntry
	clean := func(p string) originLive {
		return originLive{URL: shop + p, Method: "GET", Sent: "GET", Capture: liveAt(p, sv(), ev())}
	}

	// The fixture: five listed, two drift, one is not a 402.
	five := []M{item("/r1", sv(), ev()), item("/r2", sv(), ev()), item("/r3", sv(), ev()), item("/r4", sv(), ev()), item("/r5", sv(), ev())}
	r3 := ev()
	r3["payTo"] = "0x1111111111111111111111111111111111111111"
	r4 := sv()
	r4["amount"] = "20000"
	add("five-two-drift-one-not-402", "five listed resources: /r3 pays another payTo, /r4 charges another amount, /r5 answers 200", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(five...))),
		Live: []originLive{clean("/r1"), clean("/r2"),
			{URL: shop + "/r3", Method: "GET", Sent: "GET", Capture: liveAt("/r3", sv(), r3)},
			{URL: shop + "/r4", Method: "GET", Sent: "GET", Capture: liveAt("/r4", r4, ev())},
			{URL: shop + "/r5", Method: "GET", Sent: "GET", Capture: capOf((&resp{outcome: "ok", status: 200}).text("free"))}},
	})
	add("manifest-clean", "a manifest whose listings are the live terms: nothing", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", sv(), ev())))),
		Live:      []originLive{clean("/r1")},
	})
	evmCase := ev()
	evmCase["payTo"] = strings.ToLower(evmCase["payTo"].(string))
	add("manifest-evm-case", "a listed EVM payTo in another case is the same address: nothing", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", sv(), evmCase)))),
		Live:      []originLive{clean("/r1")},
	})
	lz := sv()
	lz["amount"] = "010000"
	add("manifest-amount-leading-zero", "a listed amount with a leading zero is the same number: nothing", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", lz, ev())))),
		Live:      []originLive{clean("/r1")},
	})
	net := ev()
	net["network"] = "eip155:84532"
	sch := sv()
	sch["scheme"] = "upto"
	asset := sv()
	asset["asset"] = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
	add("manifest-drift-fields", "listed scheme, asset and network differ from the live ones", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", sch, net), item("/r2", asset, ev())))),
		Live:      []originLive{clean("/r1"), clean("/r2")},
	})
	add("manifest-drift-count", "one entry listed, two live", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", sv())))),
		Live:      []originLive{clean("/r1")},
	})
	v1live := body402(v1Doc(sv(), ev()))
	add("manifest-live-v1-body", "the live challenge is a v1 body: its legacy names are compared as CAIP-2, its maxAmountRequired as the amount", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", sv(), r3)))),
		Live:      []originLive{{URL: shop + "/r1", Method: "GET", Sent: "GET", Capture: capOf(v1live)}},
	})
	noAcc := item("/r1")
	delete(noAcc, "accepts")
	add("manifest-no-accepts", "an item without accepts lists no terms to compare: nothing", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(noAcc))),
		Live:      []originLive{clean("/r1")},
	})
	add("manifest-not-402-and-failed", "a listed resource answers 404, another does not answer", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", sv()), item("/r2", sv())))),
		Live: []originLive{{URL: shop + "/r1", Method: "GET", Sent: "GET", Capture: status(404)},
			{URL: shop + "/r2", Method: "GET", Sent: "GET", Capture: outCapture{Outcome: "timeout", Headers: map[string]string{}}}},
	})
	add("manifest-402-no-challenge", "a 402 with no challenge: listed_not_402 holds, nothing to compare", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(item("/r1", sv())))),
		Live:      []originLive{{URL: shop + "/r1", Method: "GET", Sent: "GET", Capture: capOf(base402().text("{}"))}},
	})
	post := item("/r1", sv(), ev())
	post["input"] = M{"method": "POST", "bodyType": "json", "body": M{"q": "x"}}
	add("manifest-post", "a POST item is requested with POST", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(post))),
		Live:      []originLive{{URL: shop + "/r1", Method: "POST", Sent: "POST", Capture: liveAt("/r1", sv(), ev())}},
	})
	mcp := item("/mcp", sv())
	mcp["type"] = "mcp"
	tmpl := item("/weather/:city", sv())
	put := item("/r1", sv())
	put["input"] = M{"method": "PUT"}
	tmplOnly := item("/w", sv())
	tmplOnly["input"] = M{"method": "GET", "routeTemplate": "/w/{city}"}
	add("manifest-not-linted", "an MCP item, a route template, a PUT item: named and not fetched", originCase{
		Documents: wellKnownDocs(missing, doc200(manifestOf(mcp, tmpl, put, tmplOnly))),
	})
	for _, bad := range []struct{ id, note, body string }{
		{"manifest-version-1", "a manifest with x402Version 1", `{"x402Version":1,"items":[]}`},
		{"manifest-version-2-0", "a manifest with x402Version 2.0", `{"x402Version":2.0,"items":[]}`},
		{"manifest-items-missing", "a manifest without items", `{"x402Version":2}`},
		{"manifest-item-not-object", "an item that is a string", `{"x402Version":2,"items":["https://seller.example/r1"]}`},
		{"manifest-item-no-url", "an item without resource.url", `{"x402Version":2,"items":[{"resource":{},"type":"http"}]}`},
		{"manifest-accepts-not-array", "an item whose accepts is an object", `{"x402Version":2,"items":[{"resource":{"url":"https://seller.example/r1"},"accepts":{}}]}`},
		{"manifest-html", "a manifest path answering an HTML page", `<html></html>`},
		{"manifest-two-values", "two JSON values", `{"x402Version":2,"items":[]} {}`},
	} {
		add(bad.id, bad.note, originCase{Documents: wellKnownDocs(missing, doc200(bad.body))})
	}
	accBad := `{"x402Version":2,"items":[{"resource":{"url":"https://seller.example/r1"},"accepts":[1,` + string(enc(ev())) + `]}]}`
	add("manifest-accepts-entry-not-object", "an accepts entry that is a number: invalid, the rest compared", originCase{
		Documents: wellKnownDocs(missing, doc200(accBad)),
		Live:      []originLive{clean("/r1")},
	})

	// /.well-known/x402
	wk := func(urls ...any) outCapture { return doc200(string(enc(M{"version": num("1"), "resources": urls}))) }
	add("well-known-clean", "a fan-out list of one resource answering 402: nothing", originCase{
		Documents: wellKnownDocs(wk(shop+"/r1"), missing),
		Live:      []originLive{{URL: shop + "/r1", Method: "", Sent: "GET", Capture: liveAt("/r1", sv())}},
	})
	add("well-known-post-fallback", "GET answers 405, POST answers 402: nothing", originCase{
		Documents: wellKnownDocs(wk(shop+"/r1"), missing),
		Live:      []originLive{{URL: shop + "/r1", Method: "", Sent: "POST", Capture: liveAt("/r1", sv())}},
	})
	add("well-known-duplicate-off-origin-invalid", "a repeated URL, another origin's URL, a relative URL, a number, userinfo, ftp", originCase{
		Documents: wellKnownDocs(wk(shop+"/r1", shop+"/r1", "https://other.example/r1", "http://seller.example/r1", "https://seller.example:8443/r1", "/r1", num("7"), "https://u@seller.example/r1", "ftp://seller.example/r1"), missing),
		Live:      []originLive{{URL: shop + "/r1", Method: "", Sent: "GET", Capture: liveAt("/r1", sv())}},
	})
	add("well-known-resources-missing", "a fan-out list without resources", originCase{Documents: wellKnownDocs(doc200(`{"version":1}`), missing)})
	add("both-documents", "the same resource in both documents is requested once per method", originCase{
		Documents: wellKnownDocs(wk(shop+"/r1"), doc200(manifestOf(item("/r1", sv())))),
		Live: []originLive{{URL: shop + "/r1", Method: "", Sent: "GET", Capture: liveAt("/r1", sv())},
			{URL: shop + "/r1", Method: "GET", Sent: "GET", Capture: liveAt("/r1", sv())}},
	})

	// The cap: 32 distinct resources are linted, the 33rd is named.
	for _, n := range []int{32, 33} {
		var urls []any
		var live []originLive
		for i := 0; i < n; i++ {
			p := "/r" + strconv.Itoa(i)
			urls = append(urls, shop+p)
			if i < 32 {
				live = append(live, originLive{URL: shop + p, Method: "", Sent: "GET", Capture: liveAt(p, sv())})
			}
		}
		add(fmt.Sprintf("cap-%d", n), fmt.Sprintf("%d listed resources (the cap is 32)", n), originCase{Documents: wellKnownDocs(wk(urls...), missing), Live: live})
	}

	// No document.
	add("no-document", "neither well-known document answers 200", originCase{Documents: wellKnownDocs(missing, missing)})
	add("no-document-failed", "neither well-known document answers at all", originCase{Documents: wellKnownDocs(
		outCapture{Outcome: "failed", Headers: map[string]string{}}, capOf((&resp{outcome: "over_cap", status: 200}).text("")))})

	// OpenAPI
	withAPI := func(api outCapture, live ...originLive) originCase {
		d := wellKnownDocs(missing, missing)
		d = append(d, originDoc{Leg: "openapi", URL: shop + "/openapi.json", Named: true, Capture: api})
		return originCase{Documents: d, Live: live}
	}
	getLive := func(p string, m string, entries ...M) originLive {
		return originLive{URL: shop + p, Method: m, Sent: m, Capture: liveAt(p, entries...)}
	}
	add("openapi-price-match", "an x-payment-info price of 0.01 USD and a live amount of 10000: nothing", withAPI(
		doc200(openAPIOf(M{"/r1": M{"get": paidOp(usd("0.01"))}, "/free": M{"get": M{"responses": M{}}}})), getLive("/r1", "GET", sv(), ev())))
	add("openapi-price-forms", "$0.010 in the object form, 0.01 as a JSON number, the flat pricingMode form: nothing", withAPI(
		doc200(openAPIOf(M{"/a": M{"get": paidOp(usd("$0.010"))}, "/b": M{"post": paidOp(usd("0.01"))},
			"/c": M{"get": M{"x-payment-info": M{"pricingMode": "fixed", "price": num("0.01")}}}})),
		getLive("/a", "GET", sv()), getLive("/b", "POST", sv()), getLive("/c", "GET", sv())))
	add("openapi-price-mismatch", "0.02 USD listed, 10000 live; a dynamic price is not compared", withAPI(
		doc200(openAPIOf(M{"/r1": M{"get": paidOp(usd("0.02"))}, "/r2": M{"get": paidOp(M{"mode": "dynamic", "currency": "USD", "min": "0.01", "max": "1"})}})),
		getLive("/r1", "GET", sv(), ev()), getLive("/r2", "GET", sv())))
	add("openapi-price-invalid", "a price with seven decimals, a negative one, one in EUR (not compared), an x-payment-info that is a string", withAPI(
		doc200(openAPIOf(M{"/a": M{"get": paidOp(usd("0.0000001"))}, "/b": M{"get": paidOp(usd("-1"))},
			"/c": M{"get": paidOp(M{"mode": "fixed", "currency": "EUR", "amount": "0.01"})}, "/d": M{"get": M{"x-payment-info": "x402"}},
			"/e": M{"get": paidOp(usd("0.0000010"))}})),
		getLive("/a", "GET", sv()), getLive("/b", "GET", sv()), getLive("/c", "GET", sv()), getLive("/e", "GET", sv())))
	add("openapi-not-linted", "a PUT operation and a templated path", withAPI(
		doc200(openAPIOf(M{"/a": M{"put": paidOp(usd("0.01"))}, "/w/{city}": M{"get": paidOp(usd("0.01"))}}))))
	srv := `{"openapi":"3.0.3","servers":[{"url":"/v1"}],"paths":{"/r1":{"get":{"x-payment-info":{"price":{"mode":"fixed","currency":"USD","amount":"0.01"}}}}}}`
	add("openapi-server-path", "servers[0].url /v1 puts the resources under /v1", withAPI(doc200(srv), getLive("/v1/r1", "GET", sv())))
	offSrv := `{"openapi":"3.0.3","servers":[{"url":"https://api.other.example"}],"paths":{"/r1":{"get":{"x-payment-info":{}}}}}`
	add("openapi-server-elsewhere", "servers[0].url on another origin", withAPI(doc200(offSrv)))
	for _, bad := range []struct{ id, note, body string }{
		{"openapi-no-version", "no openapi string", `{"paths":{}}`},
		{"openapi-no-paths", "no paths object", `{"openapi":"3.1.0"}`},
		{"openapi-server-url-missing", "servers[0] without url", `{"openapi":"3.1.0","servers":[{}],"paths":{}}`},
	} {
		add(bad.id, bad.note, withAPI(doc200(bad.body)))
	}
	add("openapi-named-missing", "the named OpenAPI document answers 404", withAPI(missing))
	named404 := withAPI(missing)
	named404.Documents[1].Capture = doc200(manifestOf(item("/r1", sv())))
	named404.Live = []originLive{getLive("/r1", "GET", sv())}
	add("openapi-named-missing-manifest-read", "the named OpenAPI document answers 404, the manifest is read", named404)
	return out
}
