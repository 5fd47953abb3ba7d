/** HTML-escapes text for an attribute or element body (pure). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The one HTML page: no data in it, only where the API is, the CSRF token and whether actions
 * exist. Everything else is fetched as JSON and rendered by the bundle as text nodes.
 */
export function dashboardPage(base: string, csrfToken: string, readOnly: boolean): string {
  const b = escapeHtml(base);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="jq-base" content="${b}">
<meta name="jq-csrf" content="${escapeHtml(csrfToken)}">
<meta name="jq-read-only" content="${readOnly ? 'true' : 'false'}">
<title>Job queue</title>
<link rel="icon" href="${b}/assets/favicon.svg">
<link rel="stylesheet" href="${b}/assets/app.css">
<script defer src="${b}/assets/app.js"></script>
</head>
<body>
<noscript>The job queue dashboard needs JavaScript.</noscript>
</body>
</html>
`;
}

/** The mount point as the browser addressed it (global prefix included), without query or trailing slash. */
export function requestBase(url: string | undefined): string {
  const path = (url ?? '/').split(/[?#]/)[0];
  return path.replace(/\/+$/, '');
}
