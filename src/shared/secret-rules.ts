// The secrets crux finds in free text (SPEC §7): secretlint's recommended rule set (MIT, © azu; bundled apart as
// dist/secretlint.cjs and loaded on first use), and for the kinds it lacks, gitleaks' rules of the same names
// (MIT, © Zachary Rice: stripe-access-token, gcp-api-key, jwt, and its generic-api-key shape for `NAME=value`).
// Each kind is a stable name, listed in crux-journal(1); never change one (`journal check` counts by kind).

/** Every kind crux redacts, by the name it writes (`[redacted:KIND]`). */
export const SECRET_KINDS = [
  'aws-access-key-id',
  'aws-secret-access-key',
  'github-token',
  'gitlab-token',
  'slack-token',
  'slack-webhook',
  'stripe-key',
  'openai-key',
  'anthropic-key',
  'google-api-key',
  'npm-token',
  'jwt',
  'private-key',
  'bearer',
  'basic-auth',
  'password',
  'generic-secret',
  'sendgrid-key',
  'shopify-token',
  'linear-key',
  'notion-token',
  'groq-key',
  'huggingface-token',
  'grafana-token',
  '1password-token',
  'vault-token',
  'vercel-token',
  'databricks-token',
  'docker-token',
  'figma-token',
  'connection-string',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

/** secretlint's message ids → crux's kinds; an id not here (an AWS account id, a file-only rule) is not a secret. */
export const SECRETLINT_KINDS: Readonly<Record<string, SecretKind>> = {
  AWSAccessKeyID: 'aws-access-key-id',
  AWSSecretAccessKey: 'aws-secret-access-key',
  PrivateKey: 'private-key',
  PrivateKeyJSON: 'private-key',
  PackageJSON_xOauthToken: 'npm-token',
  Npmrc_authToken: 'npm-token',
  NPM_ACCESS_TOKEN: 'npm-token',
  SLACK_TOKEN: 'slack-token',
  IncomingWebhook: 'slack-webhook',
  OPENAI_TOKEN: 'openai-key',
  ANTHROPIC_API_KEY: 'anthropic-key',
  GROQ_API_KEY: 'groq-key',
  HUGGINGFACE_USER_ACCESS_TOKEN: 'huggingface-token',
  LINEAR_API_TOKEN: 'linear-key',
  NOTION_INTEGRATION_TOKEN: 'notion-token',
  SENDGRID_KEY: 'sendgrid-key',
  SHOPIFY_KEY: 'shopify-token',
  GITHUB_TOKEN: 'github-token',
  GITLAB_PERSONAL_ACCESS_TOKEN: 'gitlab-token',
  GRAFANA_CLOUD_API_TOKEN: 'grafana-token',
  GRAFANA_SERVICE_ACCOUNT_TOKEN: 'grafana-token',
  OPS_TOKEN: '1password-token',
  MongoDBConnection: 'connection-string',
  MySQLConnection: 'connection-string',
  PostgreSQLConnection: 'connection-string',
  HASHICORP_VAULT_SERVICE_TOKEN: 'vault-token',
  HASHICORP_VAULT_BATCH_TOKEN: 'vault-token',
  HASHICORP_VAULT_RECOVERY_TOKEN: 'vault-token',
  VERCEL_PERSONAL_ACCESS_TOKEN: 'vercel-token',
  VERCEL_INTEGRATION_TOKEN: 'vercel-token',
  VERCEL_APP_ACCESS_TOKEN: 'vercel-token',
  VERCEL_APP_REFRESH_TOKEN: 'vercel-token',
  VERCEL_AI_GATEWAY_API_KEY: 'vercel-token',
  DATABRICKS_PERSONAL_ACCESS_TOKEN: 'databricks-token',
  DOCKER_PERSONAL_ACCESS_TOKEN: 'docker-token',
  FIGMA_PERSONAL_ACCESS_TOKEN: 'figma-token',
};

/**
 * What every secret secretlint's rules find contains (lower case): a text with none of these is not handed to
 * them, so that the rule set is neither loaded nor run for it. Only a filter ahead of the rules, never a rule:
 * the unit test holds that no text the rules report on lacks one.
 */
export const SECRETLINT_KEYWORDS: readonly string[] = [
  'secret',
  'a3t',
  'akia',
  'agpa',
  'aida',
  'aroa',
  'aipa',
  'anpa',
  'anva',
  'asia',
  'private key',
  '_authtoken',
  'npm_',
  'x-oauth-basic',
  'xox',
  'xapp',
  'hooks.slack.com',

  't3blbkfj',
  'sk-ant-',
  'gsk_',
  'hf_',
  'lin_api_',
  'ntn_',
  'sg.',
  'shppa_',
  'shpca_',
  'shpat_',
  'shpss_',
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'github_pat_',
  'glpat-',
  'glc_',
  'glsa_',
  'ops_',
  'mongodb',
  'mysql',
  'postgres',
  'hvs.',
  'hvb.',
  'hvr.',
  'vcp_',
  'vci_',
  'vca_',
  'vcr_',
  'vck_',
  'dapi',
  'dckr_pat_',
  'figd_',
];

/** A rule of crux's own table: the secret is the pattern's group `s`; `keyword` (lower case) must be in the text. */
export interface PatternRule {
  readonly kind: SecretKind;
  readonly keywords: readonly string[];
  readonly pattern: RegExp;
}

// A value that names a secret without holding one: a variable, a template, a placeholder, what crux already hid.
export const NOT_A_VALUE = /^(?:\$|%|<|\{\{|\[redacted|\[private\]|\*{3}|x{4}|null$|none$|true$|false$|undefined$|changeme$|example)/i;

// The names whose assigned value is a secret (gitleaks' generic-api-key keywords, with SPEC §7's).
const SECRET_NAME =
  '[A-Za-z0-9_.-]*?(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key|client[_.-]?secret|private[_.-]?key|auth[_.-]?key|credentials?)';
const VALUE = '(?<s>[^\\s\'"`,;)\\]}]{6,})';

export const PATTERN_RULES: readonly PatternRule[] = [
  // gitleaks aws-access-token (secretlint passes over AWS's documentation example; crux keeps no key id at all)
  { kind: 'aws-access-key-id', keywords: ['a3t', 'akia', 'asia', 'abia', 'acca'], pattern: /\b(?<s>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b/g },
  // An AWS secret access key assigned to its name (git-secrets' shape, as secretlint's rule, without its allowlist)
  {
    kind: 'aws-secret-access-key',
    keywords: ['secret'],
    pattern: /aws_?secret_?(?:access_?)?key["']?\s*(?::|=>|=)\s*["']?(?<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
  },
  // gitleaks openai-api-key and anthropic-api-key by their prefixes alone (a key's length varies by its kind)
  { kind: 'openai-key', keywords: ['sk-'], pattern: /(?<![\w-])(?<s>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,})/g },
  { kind: 'anthropic-key', keywords: ['sk-ant-'], pattern: /(?<![\w-])(?<s>sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{20,})/g },
  // gitleaks stripe-access-token
  { kind: 'stripe-key', keywords: ['sk_', 'rk_'], pattern: /\b(?<s>(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})\b/g },
  // gitleaks gcp-api-key
  { kind: 'google-api-key', keywords: ['aiza'], pattern: /\b(?<s>AIza[\w-]{35})(?![\w-])/g },
  // gitleaks jwt
  {
    kind: 'jwt',
    keywords: ['ey'],
    pattern: /\b(?<s>ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/\\_-]{17,}\.(?:[a-zA-Z0-9/\\_-]{10,}={0,2})?)/g,
  },
  // An Authorization header's credential (gitleaks' authorization rules): Bearer, Basic.
  { kind: 'bearer', keywords: ['bearer'], pattern: /\bbearer\s+(?<s>[A-Za-z0-9._~+/=-]{8,})/gi },
  { kind: 'basic-auth', keywords: ['basic'], pattern: /\bauthorization:?\s*["']?basic\s+(?<s>[A-Za-z0-9+/=]{8,})/gi },
  // gitleaks generic-api-key's shape: a secret's name, an assignment, a value; and a command line's option.
  {
    kind: 'generic-secret',
    keywords: ['pass', 'pwd', 'secret', 'token', 'key', 'credential'],
    pattern: new RegExp(`(?<name>${SECRET_NAME})["']?\\s*(?::=|=>|=|:)\\s*["'\`]?${VALUE}`, 'gi'),
  },
  {
    kind: 'generic-secret',
    keywords: ['--'],
    pattern: new RegExp(`--(?<name>${SECRET_NAME})(?:=|\\s+)["']?${VALUE}`, 'gi'),
  },
];

/** A generic rule's kind by the name the value was assigned to: a password's, or another secret's. */
export const kindOfName = (name: string): SecretKind => (/pass|pwd/i.test(name) ? 'password' : 'generic-secret');
