#version 450
// Parallax occlusion mapping: tangent-space view vector out.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec3 a_tangent;
layout(location = 3) in vec2 a_uv;
layout(binding = 0) uniform U { mat4 mvp; vec3 eye; } u;
out vec2 v_uv;
out vec3 v_view_ts;
void main() {
    vec3 b = cross(a_normal, a_tangent);
    vec3 v = u.eye - a_pos;
    v_view_ts = vec3(dot(v, a_tangent), dot(v, b), dot(v, a_normal));
    v_uv = a_uv;
    gl_Position = u.mvp * vec4(a_pos, 1.0);
}
