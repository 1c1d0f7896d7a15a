// Renders the bridge's OpenAPI document with Swagger UI. It is a file
// rather than an inline script so that the page works under the
// dashboard's Content-Security-Policy (default-src 'self').
(function () {
  "use strict";
  SwaggerUIBundle({
    // Relative, so that the page also works behind a path prefix.
    url: new URL("../openapi.json", document.baseURI).href,
    dom_id: "#docs",
    // The default sends the document to an online validator.
    validatorUrl: null,
    deepLinking: true,
  });
})();
