#version 450
// Debug view: the GS draws each vertex normal as a short line.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(binding = 0) uniform D { mat4 mvp; float len; } d;
out vec3 g_normal;
out vec4 g_tip;
void main() {
    g_normal = a_normal;
    g_tip = d.mvp * vec4(a_pos + a_normal * d.len, 1.0);
    gl_Position = d.mvp * vec4(a_pos, 1.0);
}
