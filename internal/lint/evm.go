package lint

// transferMethods are the exact EVM scheme's asset transfer methods
// (scheme_exact_evm.md, Summary).
var transferMethods = map[string]bool{"eip3009": true, "permit2": true, "erc7710": true}

// exactEVM: exact on EVM. assetTransferMethod, when present, is one of the
// spec's. The EIP-712 domain (extra.name, extra.version) is required with
// eip3009 and with no method named: the spec says implementations then
// prioritise eip3009 (scheme_exact_evm.md, Summary), and the reference client
// defaults to it and throws without the domain before signing (@x402/evm,
// exact/client/scheme.ts and eip3009.ts). permit2 and erc7710 need no domain
// here.
func (e *entryView) exactEVM() {
	v, named := e.extra["assetTransferMethod"]
	method, _ := v.(string)
	if named && !transferMethods[method] {
		e.add(ruleEVMTransferMethodUnknown, "extra.assetTransferMethod")
		return
	}
	if named && method != "eip3009" {
		return
	}
	for _, k := range []string{"name", "version"} {
		if s, ok := e.extra[k].(string); !ok || s == "" {
			e.add(ruleEVMDomainRequired, "extra."+k)
		}
	}
}
