/**
 * An email's HTML part in an iframe with an empty sandbox (no scripts, no same origin, no forms,
 * no navigation of the top page) and the UI's own CSP inherited through srcdoc (remote images
 * blocked: opening a message tells no tracker), so whatever the HTML holds can never act in the
 * operator's session. Shared by the message page, the test inbox and the template preview.
 */
export function SandboxedHtml(props: { html: string; title: string; class?: string }) {
  return (
    <iframe
      class={props.class ?? 'message-html'}
      title={props.title}
      sandbox=""
      srcdoc={props.html}
      referrerpolicy="no-referrer"
    />
  );
}
