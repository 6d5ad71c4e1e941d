#version 450
// Thick lines: each input line becomes a screen-space quad.
layout(lines) in;
layout(triangle_strip, max_vertices = 4) out;
in vec3 g_color[];
in float g_t[];
out vec3 f_color;
out float f_edge;
void main() {
    vec2 d = normalize(gl_in[1].gl_Position.xy - gl_in[0].gl_Position.xy);
    vec2 n = vec2(-d.y, d.x) * 0.01;
    for (int i = 0; i < 2; ++i) {
        for (int s = -1; s <= 1; s += 2) {
            f_color = g_color[i];
            f_edge = float(s);
            gl_Position = gl_in[i].gl_Position + vec4(n * float(s) * gl_in[i].gl_Position.w, 0.0, 0.0);
            EmitVertex();
        }
    }
    EndPrimitive();
}
