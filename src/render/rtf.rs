//! Our RTF writer: Markdown (pulldown-cmark events) to RTF 1.x.
