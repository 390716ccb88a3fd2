package lint

// Rule ids of x402-lint/v1, one constant per published rule (the document is
// the source of their severity and citation; messages.go holds their static
// messages). TestEveryRuleHasAConstant keeps the two in step.
const (
	ruleFetchFailed       = "fetch_failed"
	ruleStatusNot402      = "status_not_402"
	ruleChallengeMissing  = "challenge_missing"
	ruleCacheControl      = "cache_control_no_store"
	ruleCORSExposeHeaders = "cors_expose_headers"

	ruleHeaderUndecodable = "header_undecodable"
	ruleVersionInvalid    = "x402_version_invalid"
	ruleV2HeaderMissing   = "v2_header_missing"
	ruleLegsEntryCount    = "legs_entry_count"
	ruleLegsMismatch      = "legs_mismatch"

	ruleAcceptsMissing     = "accepts_missing"
	ruleEntryNotObject     = "entry_not_object"
	ruleResourceMissing    = "resource_missing"
	ruleResourceURLInvalid = "resource_url_invalid"
	ruleResourceMismatch   = "resource_url_mismatch"
	ruleResourceQuery      = "resource_url_query"
	ruleDescriptionLong    = "description_long"
	ruleExtensionsInvalid  = "extensions_invalid"

	ruleSchemeMissing        = "scheme_missing"
	ruleSchemeUnknown        = "scheme_unknown"
	ruleNetworkMissing       = "network_missing"
	ruleNetworkNotCAIP2      = "network_not_caip2"
	ruleNetworkCAIP2OnV1     = "network_caip2_on_v1"
	ruleNetworkUnknownV1     = "network_unknown_v1"
	ruleNetworkFamilyUnknown = "network_family_unknown"
	ruleAmountMissing        = "amount_missing"
	ruleAmountNotDigits      = "amount_not_digits"
	ruleAmountZero           = "amount_zero"
	ruleAmountLeadingZeros   = "amount_leading_zeros"
	ruleAddressMissing       = "address_missing"
	ruleAddressInvalid       = "address_invalid"
	ruleAddressChecksum      = "address_checksum"
	rulePayToPlaceholder     = "pay_to_placeholder"
	ruleMaxTimeoutMissing    = "max_timeout_missing"
	ruleMaxTimeoutInvalid    = "max_timeout_invalid"
	ruleMaxTimeoutLong       = "max_timeout_long"
	ruleExtraNotObject       = "extra_not_object"

	ruleSVMMemoNotString = "svm_memo_not_string"
	ruleSVMMemoTooLong   = "svm_memo_too_long"

	ruleEVMTransferMethodUnknown = "evm_transfer_method_unknown"
	ruleEVMDomainRequired        = "evm_domain_required"

	ruleUptoExtraMissing        = "upto_extra_missing"
	ruleUptoWithdrawDelay       = "upto_withdraw_delay_invalid"
	ruleUptoTokenProgramInvalid = "upto_token_program_invalid"

	ruleBazaarSchemaInvalid      = "bazaar_schema_invalid"
	ruleBazaarInfoInvalid        = "bazaar_info_invalid"
	ruleSIWXInfoMissing          = "siwx_info_missing"
	ruleSIWXDomain               = "siwx_domain"
	ruleSIWXURI                  = "siwx_uri"
	ruleSIWXVersion              = "siwx_version"
	ruleSIWXNonce                = "siwx_nonce"
	ruleSIWXIssuedAt             = "siwx_issued_at"
	ruleSIWXExpiration           = "siwx_expiration"
	rulePaymentIdentifierInvalid = "payment_identifier_invalid"

	ruleChainUnavailable    = "chain_unavailable"
	ruleChainLookupSkipped  = "chain_lookup_skipped"
	ruleChainOtherNetwork   = "chain_other_network"
	ruleSVMAssetNotMint     = "svm_asset_not_mint"
	ruleSVMATAMissing       = "svm_ata_missing"
	ruleSVMATANotTokenAcct  = "svm_ata_not_token_account"
	ruleEVMDomainMismatch   = "evm_domain_mismatch"
	ruleEVMDomainUnreadable = "evm_domain_unreadable"

	ruleDiscoveryMissing   = "discovery_missing"
	ruleDiscoveryInvalid   = "discovery_invalid"
	ruleDiscoveryDuplicate = "discovery_resource_duplicate"
	ruleListingOffOrigin   = "listing_off_origin"
	ruleListingNotLinted   = "listing_not_linted"
	ruleResourcesCapped    = "discovery_resources_capped"
	ruleListedNot402       = "listed_not_402"
	ruleListingDrift       = "listing_drift"
	rulePriceMismatch      = "listing_price_mismatch"
)

// messages are the static texts of the findings: never a fetched value.
var messages = map[string]string{
	ruleFetchFailed:       "no complete response within the fetch limits; nothing else is graded",
	ruleStatusNot402:      "the status is not 402 Payment Required; nothing else is graded",
	ruleChallengeMissing:  "a 402 with neither a PAYMENT-REQUIRED header nor an x402 JSON body: nothing to pay",
	ruleCacheControl:      "the 402 has no Cache-Control: no-store; a cache may replay this challenge to other clients",
	ruleCORSExposeHeaders: "CORS is enabled but Access-Control-Expose-Headers does not name PAYMENT-REQUIRED; browser clients cannot read it",

	ruleHeaderUndecodable: "the PAYMENT-REQUIRED header is not base64 of a JSON object",
	ruleVersionInvalid:    "x402Version is not the version this leg carries (2 in the header, 1 in a v1 body); the leg is not graded further",
	ruleV2HeaderMissing:   "a v2 challenge only in the body: v2 clients read only the PAYMENT-REQUIRED header and cannot pay it",
	ruleLegsEntryCount:    "the v1 body and the v2 header offer different numbers of accepts entries",
	ruleLegsMismatch:      "the v1 body and the v2 header differ in this field of the entry: v1 and v2 clients would pay different terms",

	ruleAcceptsMissing:     "accepts is missing, not an array, or empty",
	ruleEntryNotObject:     "the accepts entry is not a JSON object",
	ruleResourceMissing:    "the resource URL is missing",
	ruleResourceURLInvalid: "the resource URL is not an absolute http or https URL",
	ruleResourceMismatch:   "the resource URL names another scheme, host, port or path than the called URL",
	ruleResourceQuery:      "the resource URL differs from the called URL only in its query or a trailing slash",
	ruleDescriptionLong:    "the description is over 500 characters; facilitators and directories truncate it",
	ruleExtensionsInvalid:  "extensions is not an object of objects",

	ruleSchemeMissing:        "the scheme is missing",
	ruleSchemeUnknown:        "the scheme is neither exact nor upto; standard clients skip this entry",
	ruleNetworkMissing:       "the network is missing",
	ruleNetworkNotCAIP2:      "the network is not a CAIP-2 chain id",
	ruleNetworkCAIP2OnV1:     "a CAIP-2 id on a v1 leg, where v1 names networks by legacy name; v1 clients reject the entry",
	ruleNetworkUnknownV1:     "the network is not a legacy name v1 clients know",
	ruleNetworkFamilyUnknown: "the network is neither eip155 nor solana; addresses and scheme fields are not graded",
	ruleAmountMissing:        "the amount is missing or not a string",
	ruleAmountNotDigits:      "the amount is not a string of decimal digits",
	ruleAmountZero:           "the amount is zero",
	ruleAmountLeadingZeros:   "the amount has leading zeros",
	ruleAddressMissing:       "the address is missing or not a string",
	ruleAddressInvalid:       "the address is not valid for the network family",
	ruleAddressChecksum:      "the mixed-case EVM address fails its EIP-55 checksum",
	rulePayToPlaceholder:     "payTo is a placeholder (the EVM zero address or the Solana system program)",
	ruleMaxTimeoutMissing:    "maxTimeoutSeconds is missing",
	ruleMaxTimeoutInvalid:    "maxTimeoutSeconds is not an integer greater than zero",
	ruleMaxTimeoutLong:       "maxTimeoutSeconds is over 3600",
	ruleExtraNotObject:       "extra is not an object",

	ruleSVMMemoNotString: "extra.memo is not a string",
	ruleSVMMemoTooLong:   "extra.memo is over 256 bytes",

	ruleEVMTransferMethodUnknown: "extra.assetTransferMethod is not eip3009, permit2 or erc7710",
	ruleEVMDomainRequired:        "no EIP-712 domain name or version in extra: clients sign eip3009 (named, or the default with no assetTransferMethod) and cannot without it; a token without EIP-3009 names assetTransferMethod permit2",

	ruleUptoExtraMissing:        "a field the upto scheme requires in extra for this network is missing",
	ruleUptoWithdrawDelay:       "extra.withdrawDelay is not an integer greater than zero",
	ruleUptoTokenProgramInvalid: "extra.tokenProgram is neither the SPL Token nor the Token-2022 program",

	ruleBazaarSchemaInvalid:      "the bazaar schema is missing, does not compile as JSON Schema 2020-12, or references outside itself",
	ruleBazaarInfoInvalid:        "the bazaar info does not validate against its schema; directories skip this resource",
	ruleSIWXInfoMissing:          "the sign-in-with-x extension has no info object",
	ruleSIWXDomain:               "the sign-in-with-x domain is not the called URL's authority",
	ruleSIWXURI:                  "the sign-in-with-x uri is not under the called URL's origin",
	ruleSIWXVersion:              "the sign-in-with-x version is not \"1\"",
	ruleSIWXNonce:                "the sign-in-with-x nonce is not 32 hexadecimal characters",
	ruleSIWXIssuedAt:             "the sign-in-with-x issuedAt is missing, not an RFC 3339 time, or in the future",
	ruleSIWXExpiration:           "the sign-in-with-x expirationTime is not an RFC 3339 time in the future",
	rulePaymentIdentifierInvalid: "the payment-identifier info is not well formed",

	ruleChainUnavailable:    "the RPC node did not answer the look-ups of this entry; nothing is said about the chain",
	ruleChainLookupSkipped:  "this entry was not looked up: the lint reached its cap of distinct chain look-ups; nothing is said about the chain",
	ruleChainOtherNetwork:   "the RPC node serves another network than this entry's; the entry was not looked up",
	ruleSVMAssetNotMint:     "the asset is not a mint of the SPL Token or Token-2022 program",
	ruleSVMATAMissing:       "payTo has no associated token account for the asset; first payments fail",
	ruleSVMATANotTokenAcct:  "payTo's associated token account is not a token account of the asset owned by payTo",
	ruleEVMDomainMismatch:   "the asset contract's EIP-712 domain differs from extra; signatures will not verify",
	ruleEVMDomainUnreadable: "the asset contract did not answer name() or version() with a string",

	ruleDiscoveryMissing:   "no discovery document could be read (it did not answer 200 within the fetch limits)",
	ruleDiscoveryInvalid:   "the discovery document, or this part of it, is not of the document's form",
	ruleDiscoveryDuplicate: "the document names this resource (URL and method) more than once",
	ruleListingOffOrigin:   "the listed resource is on another origin; it was not fetched",
	ruleListingNotLinted:   "this listing is not an HTTP resource lint can call with GET or POST at a fixed path; it was not fetched",
	ruleResourcesCapped:    "the documents list more resources than an origin lint fetches; this listing and those after it were not linted",
	ruleListedNot402:       "the listed resource did not answer 402",
	ruleListingDrift:       "the listed payment terms differ from the live 402's",
	rulePriceMismatch:      "the listed price is not the amount the live 402 charges",
}
