package lint

// transferMethods are the exact EVM scheme's asset transfer methods
// (scheme_exact_evm.md, Summary).
var transferMethods = map[string]bool{"eip3009": true, "permit2": true, "erc7710": true}

// exactEVM: exact on EVM. assetTransferMethod, when present, is one of the
// spec's; the EIP-712 domain (extra.name, extra.version) is required with
// eip3009 and expected when no method is named (clients then try eip3009
// first and fall back to permit2). permit2 and erc7710 need no domain here.
func (e *entryView) exactEVM() {
	v, named := e.extra["assetTransferMethod"]
	method, _ := v.(string)
	if named && !transferMethods[method] {
		e.add(ruleEVMTransferMethodUnknown, "extra.assetTransferMethod")
		return
	}
	rule := ""
	switch {
	case !named:
		rule = ruleEVMDomainExpected
	case method == "eip3009":
		rule = ruleEVMDomainRequired
	default:
		return
	}
	for _, k := range []string{"name", "version"} {
		if s, ok := e.extra[k].(string); !ok || s == "" {
			e.add(rule, "extra."+k)
		}
	}
}
