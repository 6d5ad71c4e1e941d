#version 450
// Immediate-mode UI: orthographic projection, vertex colour, atlas UV.
layout(location = 0) in vec2 a_pos;
layout(location = 1) in vec2 a_uv;
layout(location = 2) in vec4 a_color;
layout(push_constant) uniform PC { vec2 scale; vec2 translate; } pc;
out vec4 v_color;
out vec2 v_uv;
void main() {
    v_color = a_color;
    v_uv = a_uv;
    gl_Position = vec4(a_pos * pc.scale + pc.translate, 0.0, 1.0);
}
