#version 450
// Tangent-space normal mapping: TBN rows sent as three vec3 varyings.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec4 a_tangent;
layout(location = 3) in vec2 a_uv;
layout(binding = 0) uniform Object { mat4 model; mat4 view_proj; } obj;
out vec2 v_uv;
out vec3 v_t;
out vec3 v_b;
out vec3 v_n;
void main() {
    vec3 n = normalize(mat3(obj.model) * a_normal);
    vec3 t = normalize(mat3(obj.model) * a_tangent.xyz);
    v_t = t;
    v_b = cross(n, t) * a_tangent.w;
    v_n = n;
    v_uv = a_uv;
    gl_Position = obj.view_proj * obj.model * vec4(a_pos, 1.0);
}
