#version 450
// Deferred g-buffer fill: position, normal, uv and a flat material id.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv;
layout(location = 3) in uint a_material;
layout(binding = 0) uniform Scene { mat4 model; mat4 view_proj; vec4 tint; } s;
out vec3 v_pos;
out vec3 v_normal;
out vec2 v_uv;
flat out uint v_material;
out vec4 v_tint;
void main() {
    vec4 w = s.model * vec4(a_pos, 1.0);
    v_pos = w.xyz;
    v_normal = mat3(s.model) * a_normal;
    v_uv = a_uv;
    v_material = a_material;
    v_tint = s.tint;
    gl_Position = s.view_proj * w;
}
