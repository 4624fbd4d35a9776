"""Secret shapes known by a vendor's own token prefix, as data for memcli.privacy.detectors."""

# Tokens known by a vendor's fixed prefix and length. The shapes follow gitleaks' published rule set
# (config/gitleaks.toml, read as data in Nov 2026) for vendors whose tokens carry a prefix of their own;
# rules that need a vendor's name beside a bare random string are left to the assignment detectors.
# (kind, keywords, token regex): the regex runs only on text holding one of the keywords (as gitleaks
# does: a substring test costs far less than a regex scan), and matches only where no token character
# is glued before or after it.
VENDOR_TOKENS = (
    ("age-secret-key", ('AGE-SECRET-KEY-1', 'age-secret-key-1'),  # bech32 is read in either case
     r"(?i:AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})"),
    ("1password-token", ('ops_eyJ',), r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("artifactory-token", ('AKCp', 'cmVmd'), r"AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}"),
    ("azure-client-secret", ('Q~',), r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    ("databricks-token", ('dapi',), r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("digitalocean-token", ('_v1_',), r"do[opr]_v1_[a-f0-9]{64}"),
    ("doppler-token", ('dp.',), r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),
    ("dynatrace-token", ('dt0c01.',), r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("easypost-token", ('EZAK', 'EZTK'), r"EZ[AT]K[A-Za-z0-9]{54}"),
    ("facebook-token", ('EAAM', 'EAAC'), r"EAA[MC][A-Za-z0-9]{100,}"),
    ("flyio-token", ('fo1_', 'fm1', 'fm2_'), r"fo1_[\w-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3}"),
    ("gitlab-token", ('gl', 'GR1348941'), r"gl(?:ptt|dt|rt|ft|imt|agent|oas|soat|cbt)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,}"),
    ("grafana-token", ('glc_', 'glsa_'), r"glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ("hashicorp-token", ('.atlasv1.', 'hvs.', 'hvb.'), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}|hv[sb]\.[\w-]{90,300}"),
    ("heroku-key", ('HRKU-AA',), r"HRKU-AA[0-9A-Za-z_-]{58}"),
    ("huggingface-token", ('api_org_',), r"api_org_[A-Za-z]{34}"),
    ("infracost-token", ('ico-',), r"ico-[A-Za-z0-9]{32}"),
    ("linear-key", ('lin_api_',), r"lin_api_[A-Za-z0-9]{40}"),
    ("mailchimp-key", ('-us',), r"[a-f0-9]{32}-us\d{1,2}"),
    ("mailgun-key", ('key-',), r"key-[a-f0-9]{32}"),
    ("maxmind-key", ('_mmk',), r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
    ("notion-token", ('ntn_', 'secret_'), r"ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}"),
    ("openshift-token", ('sha256~',), r"sha256~[\w-]{43}"),
    ("perplexity-key", ('pplx-',), r"pplx-[A-Za-z0-9]{48}"),
    ("planetscale-token", ('pscale_',), r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}"),
    ("postman-key", ('PMAK-',), r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("prefect-key", ('pnu_',), r"pnu_[A-Za-z0-9]{36}"),
    ("pypi-token", ('pypi-AgEIcHlwaS5vcmc',), r"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}"),
    ("readme-key", ('rdme_',), r"rdme_[a-z0-9]{70}"),
    ("rubygems-key", ('rubygems_',), r"rubygems_[a-f0-9]{48}"),
    ("scalingo-token", ('tk-us-',), r"tk-us-[\w-]{48}"),
    ("sendgrid-key", ('SG.',), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("sendinblue-key", ('xkeysib-',), r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("sentry-token", ('sntryu_', 'sntrys_'), r"sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/_=]{80,}"),
    ("shippo-key", ('shippo_',), r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("shopify-token", ('shp',), r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("slack-token", ('xox',), r"xox[eo]-[A-Za-z0-9-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}"),
    ("square-token", ('sq0', 'EAAA'), r"sq0(?:atp|csp)-[\w-]{22,60}|EAAA[\w-]{60}"),
    ("stripe-key", ('_prod_', 'whsec_'), r"(?:sk|rk)_prod_[A-Za-z0-9]{10,99}|whsec_[A-Za-z0-9]{32,}"),
    ("telegram-bot-token", (':AA',), r"\d{8,10}:AA[A-Za-z0-9_-]{33}"),
    ("twilio-key", ('SK',), r"SK[0-9a-fA-F]{32}"),
    ("duffel-token", ('duffel_',), r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"),
    ("clojars-token", ('CLOJARS_',), r"CLOJARS_[a-z0-9]{60}"),
    ("frameio-token", ('fio-u-',), r"fio-u-[A-Za-z0-9_=-]{64}"),
    ("flutterwave-key", ('FLWSECK',), r"FLWSECK(?:_TEST)?-[a-h0-9]{12,32}(?:-X)?"),
    # Shapes from the vendors' own documentation (Dec 2026): Google OAuth access tokens and client secrets,
    # Azure DevOps personal access tokens (the 84-character form has AZDO at 76-79), Discord bot tokens
    # (base64 user id, timestamp, HMAC).
    ("google-oauth-token", ('ya29.',), r"ya29\.[0-9A-Za-z_-]{20,}"),
    ("google-client-secret", ('GOCSPX-',), r"GOCSPX-[0-9A-Za-z_-]{28}"),
    ("azure-devops-pat", ('AZDO',), r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}"),
    ("discord-bot-token", ('.',), r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"),
    ("cloudflare-ca-key", ('v1.0-',), r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    # Shapes gitleaks' rule set (b58d3f1, Jul 2026) lacks, from trufflehog's detectors (3ab759f, Aug 2026:
    # pkg/detectors/<vendor>) and the vendors' documentation: Groq, Replicate, xAI, Tailscale, Docker Hub
    # (personal and organisation tokens), Netlify, Atlassian API tokens (ATATT3, also in gitleaks) and
    # Bitbucket app passwords, Mapbox secret tokens (sk., never the public pk.), Slack's browser-session
    # client token and cookie (xoxc-, xoxd-).
    ("groq-key", ('gsk_',), r"gsk_[A-Za-z0-9]{52}"),
    ("replicate-token", ('r8_',), r"r8_[A-Za-z0-9_-]{37}"),
    ("xai-key", ('xai-',), r"xai-[A-Za-z0-9_]{80}"),
    ("tailscale-key", ('tskey-',), r"tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}"),
    ("docker-token", ('dckr_',), r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,32}"),
    ("netlify-token", ('nfp_',), r"nfp_[A-Za-z0-9_]{36}"),
    ("atlassian-token", ('ATATT3', 'ATCTT3'), r"AT[AC]TT3[A-Za-z0-9_=-]{150,250}"),
    ("bitbucket-app-password", ('ATBB',), r"ATBB[A-Za-z0-9_=.-]{28,}"),
    ("mapbox-token", ('sk.eyJ',), r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    ("slack-token", ('xoxc-', 'xoxd-'), r"xoxc-\d{6,}-\d{6,}-\d{6,}-[a-f0-9]{32,}|xoxd-[A-Za-z0-9%/+=_-]{40,}"),
)
