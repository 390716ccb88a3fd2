package lint

// ChainQueries lists the look-ups chain readiness needs for a response: one
// per graded entry on eip155 or solana whose network, asset and payTo are
// valid (exact and upto alike; an entry whose scheme lint does not know is
// skipped, as scheme_unknown says nothing else of it is graded). It is pure;
// ops makes the look-ups (internal/chain) and passes the observations back
// as Input.Chain.
func ChainQueries(in Input) []ChainQuery {
	if !in.Capture.Usable() || in.Capture.Status != 402 {
		return nil
	}
	g := &grader{in: in}
	var out []ChainQuery
	for _, v := range g.dialect(Decode(in.Capture), &Dialect{}) {
		for i := range v.doc.Accepts {
			m, ok := v.doc.Entry(i)
			if !ok || unknownScheme(m) {
				continue
			}
			n := str(m, "network")
			if v.version == 1 {
				n, _ = NetworkCAIP2(n)
			} else if !IsCAIP2(n) {
				continue
			}
			f := FamilyOf(n)
			payTo, asset := str(m, "payTo"), str(m, "asset")
			if f == FamilyUnknown || payTo == "" || asset == "" ||
				addressProblem(f, payTo) != "" || addressProblem(f, asset) != "" {
				continue
			}
			out = append(out, ChainQuery{Leg: v.leg, Entry: i, Family: f, Network: n, PayTo: payTo, Asset: asset})
		}
	}
	return out
}

// chain grades the observations of graded entries.
func (g *grader) chain(legs []view, facts *ChainFacts) {
	for _, o := range facts.Observations {
		var m map[string]any
		for _, v := range legs {
			if v.leg == o.Leg {
				m, _ = v.doc.Entry(o.Entry)
			}
		}
		if m == nil || unknownScheme(m) {
			continue
		}
		p := entryPrefix(o.Entry)
		at := func(id, field string) { g.add(id, o.Leg, idx(o.Entry), p+field) }
		switch {
		case o.Skipped:
			at(ruleChainLookupSkipped, "network")
			continue
		case o.Unavailable:
			at(ruleChainUnavailable, "network")
			continue
		case o.OtherNetwork:
			at(ruleChainOtherNetwork, "network")
			continue
		}
		switch o.Family {
		case FamilySolana:
			switch {
			case !o.AssetIsMint:
				at(ruleSVMAssetNotMint, "asset")
			case !o.ATAExists:
				at(ruleSVMATAMissing, "payTo")
			case !o.ATAIsTokenAccount:
				at(ruleSVMATANotTokenAcct, "payTo")
			}
		case FamilyEVM:
			extra, _ := m["extra"].(map[string]any)
			if !o.NameRead || !o.VersionRead {
				at(ruleEVMDomainUnreadable, "asset")
			}
			if name, ok := extra["name"].(string); ok && o.NameRead && name != o.Name {
				at(ruleEVMDomainMismatch, "extra.name")
			}
			if ver, ok := extra["version"].(string); ok && o.VersionRead && ver != o.Version {
				at(ruleEVMDomainMismatch, "extra.version")
			}
		}
	}
}
